package analysis

import (
	"slices"
	"testing"

	"github.com/gofault/gofault/catalog"
)

func TestPeerOps(t *testing.T) {
	const rh = "go.etcd.io/etcd/server/v3/etcdserver/api/rafthttp"
	sites := []catalog.Site{
		{Pkg: rh, Func: "(*pipeline).post", Callee: "(http.RoundTripper).RoundTrip", IO: "net"},
		{Pkg: rh, Func: "(*messageDecoder).decodeLimit", Callee: "io.ReadFull", IO: "net"},
		{Pkg: rh, Func: "(*messageDecoder).decodeLimit", Callee: "binary.Read", IO: "net"},
		{Pkg: rh, Func: "(*messageEncoder).encode", Callee: "(io.Writer).Write", IO: "net"},
		{Pkg: rh, Func: "NewListener", Callee: "transport.NewListenerWithOpts", IO: "disk"},
		{Pkg: rh, Func: "(*streamHandler).ServeHTTP", Callee: "rafthttp.checkClusterCompatibilityFromHeader", File: "h.go", Line: 10},
		{Pkg: rh, Func: "(*streamHandler).ServeHTTP", Callee: "(rafthttp.Raft).Process", File: "h.go", Line: 20},
		{Pkg: "go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc", Func: "(*kvServer).Range", Callee: "(net.Conn).Read", IO: "net"},
	}
	want := []string{"dial", "read", "read", "write", "", "accept", "", ""}
	if got := PeerOps(sites, DefaultPeerPackages); !slices.Equal(got, want) {
		t.Errorf("PeerOps = %q, want %q", got, want)
	}
	// An explicit pattern replaces the default.
	if got := PeerOps(sites, []string{"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"}); !slices.Equal(got, []string{"", "", "", "", "", "", "", "read"}) {
		t.Errorf("PeerOps(v3rpc) = %q", got)
	}
	if got := PeerOps(sites, []string{"go.etcd.io/etcd/server/v3/etcdserver/..."}); got[0] != "dial" || got[7] != "read" {
		t.Errorf("PeerOps(pattern) = %q", got)
	}
}

func TestPartitionContribute(t *testing.T) {
	p := &catalog.Parts{Sites: []catalog.Site{{Kind: catalog.KindError}, {Kind: catalog.KindDelay}}}
	(&Partition{Peer: []string{"", "read"}}).contribute(p)
	if p.Sites[0].Peer != "" || p.Sites[0].Kind != catalog.KindError {
		t.Errorf("site 0 %+v", p.Sites[0])
	}
	if p.Sites[1].Peer != "read" || p.Sites[1].Kind != catalog.KindDelay|catalog.KindPartition {
		t.Errorf("site 1 %+v", p.Sites[1])
	}
}
