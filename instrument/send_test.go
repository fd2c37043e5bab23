package instrument

import (
	"go/ast"
	"go/types"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/gofault/gofault/catalog"
)

// raftTransport is shaped like hashicorp/raft's in-memory cluster: Raft
// members told apart by localID with a transport address localAddr, an
// InmemTransport whose makeRPC takes the target address (named results,
// a named string type), a pipeline whose peer is a field of its receiver
// (unnamed results), and a method that returns no error.
const raftTransport = `package p

import "fmt"

type ServerID string

type ServerAddress string

type RPCResponse struct{ Response any }

type Raft struct {
	localID   ServerID
	localAddr ServerAddress
	trans     *InmemTransport
	term      uint64
}

func (r *Raft) heartbeat(to ServerAddress) error {
	_, err := r.trans.makeRPC(to, r.term)
	return err
}

type InmemTransport struct {
	localAddr ServerAddress
	peers     map[ServerAddress]*InmemTransport
}

func (i *InmemTransport) makeRPC(target ServerAddress, args any) (rpcResp RPCResponse, err error) {
	peer, ok := i.peers[target]
	if !ok {
		err = fmt.Errorf("failed to connect to peer: %v", target)
		return
	}
	_ = peer
	return RPCResponse{Response: args}, nil
}

type inmemPipeline struct {
	peerAddr ServerAddress
}

func (p *inmemPipeline) AppendEntries(args any, n int) (*RPCResponse, int, error) {
	return &RPCResponse{Response: args}, n, nil
}

func (p *inmemPipeline) Close() {}
`

// loadedTransport type-checks raftTransport as a loaded package.
func loadedTransport(t *testing.T) (fileInput, map[string]*packages.Package) {
	fset, f, info, pkg := typecheck(t, raftTransport)
	info.Scopes = map[ast.Node]*types.Scope{}
	p := &packages.Package{PkgPath: "example.com/p", Types: pkg, Syntax: []*ast.File{f}, Fset: fset, TypesInfo: info}
	return fileInput{src: []byte(raftTransport), file: f, fset: fset, info: info, pkg: pkg, lineName: "/src/p/p.go"},
		map[string]*packages.Package{"example.com/p": p}
}

// TestSendEdits: each send method of the rule gets the send hook at its
// entry, returning the zero values of its other results and the site's
// error (named results and unnamed ones, a peer that is a parameter or a
// field of the receiver); the member hook announces the member's address;
// the file and its error file compile and keep their positions.
func TestSendEdits(t *testing.T) {
	in, pkgs := loadedTransport(t)
	mt, err := resolveMember(memberRule{pkg: "example.com/p", typ: "Raft", field: "localID"}, pkgs)
	if err != nil {
		t.Fatal(err)
	}
	if err := resolveAddress(mt, "localAddr"); err != nil {
		t.Fatal(err)
	}
	mt.addr = "localAddr"
	in.member = mt
	in.sendPeers = map[string]sendRule{}
	var methods []*sendMethod
	for _, s := range []string{"example.com/p.InmemTransport.makeRPC(i.localAddr, target)", "example.com/p.inmemPipeline.AppendEntries(p.peerAddr)"} {
		r, err := parseSend(s)
		if err != nil {
			t.Fatal(err)
		}
		m, err := resolveSend(r, pkgs)
		if err != nil {
			t.Fatal(err)
		}
		methods = append(methods, m)
		in.sendPeers[sendSite(m, "").ID] = r
	}
	cat := withSends(&catalog.Catalog{Sites: []catalog.Site{{Index: 0, ID: "other"}}}, methods, "failed to connect to peer")
	var ids []string
	var sites []*catalog.Site
	for i := range cat.Sites[1:] {
		s := &cat.Sites[i+1]
		ids = append(ids, s.ID+"@"+s.Func)
		sites = append(sites, s)
		if s.Peer != catalog.PeerSend || s.Kind != catalog.KindError|catalog.KindPartition || s.Index != uint32(i+1) || s.Errors[0].Name != "unreachable" {
			t.Errorf("site %+v: want a send site (error|partition) of index %d with the transport's error", s, i+1)
		}
	}
	if want := "example.com/p.(*InmemTransport).makeRPC:send@(*InmemTransport).makeRPC example.com/p.(*inmemPipeline).AppendEntries:send@(*inmemPipeline).AppendEntries"; strings.Join(ids, " ") != want {
		t.Errorf("send sites %s, want %s", strings.Join(ids, " "), want)
	}
	out := rewriteFile(in, sites)
	var hooks []string
	for _, e := range out.edits {
		text := e.prefix
		if i := strings.Index(text, "/*line"); i >= 0 {
			text = text[:i]
		}
		hooks = append(hooks, text)
	}
	want := []string{
		" if r != nil { defer gofaultagent.MemberExit(gofaultagent.MemberEnterAt(string(r.localID), string(r.localAddr))) }; ",
		" if gofaultagent.Send(1, string(i.localAddr), string(target)) != 0 { return *new(RPCResponse), gofaultErr1(1) }; ",
		" if gofaultagent.Send(2, \"\", string(p.peerAddr)) != 0 { return *new(*RPCResponse), *new(int), gofaultErr2(1) }; ",
	}
	if strings.Join(hooks, "\n") != strings.Join(want, "\n") {
		t.Errorf("hooks\n%s\nwant\n%s", strings.Join(hooks, "\n"), strings.Join(want, "\n"))
	}
	if len(out.skipped) > 0 {
		t.Errorf("skipped %v", out.skipped)
	}
	files, err := errorFiles("p", "example.com/p", sites, map[string]string{})
	if err != nil || len(files) != 1 {
		t.Fatalf("error files %v, %v", files, err)
	}
	checkStatesCompile(t, out.src, files[0].src)
	samePositions(t, raftTransport, out.src)
}

// TestResolveSend: a send rule must name a loaded package, a type, a
// method of it with a body whose last result is an error, and a peer
// that is a string in the method's scope; the member's address must be
// a string field; each mistake is said.
func TestResolveSend(t *testing.T) {
	_, pkgs := loadedTransport(t)
	for _, tc := range []struct {
		rule, wantErr string
	}{
		{"example.com/p.InmemTransport.makeRPC(target)", ""},
		{"example.com/p.InmemTransport.makeRPC(i.localAddr, target)", ""},
		{"example.com/p.InmemTransport.makeRPC(i.peers, target)", "i.peers is a map[example.com/p.ServerAddress]*example.com/p.InmemTransport, not a string type"},
		{"example.com/p.InmemTransport.makeRPC(a, b, c)", "want pkg/path.Type.method(peer)"},
		{"example.com/p.inmemPipeline.AppendEntries(p.peerAddr)", ""},
		{"example.com/q.InmemTransport.makeRPC(target)", "package example.com/q is not among the packages instrumented"},
		{"example.com/p.Transport.makeRPC(target)", "declares no type Transport"},
		{"example.com/p.InmemTransport.send(target)", "type InmemTransport has no method send"},
		{"example.com/p.inmemPipeline.Close(p.peerAddr)", "last result is not an error"},
		{"example.com/p.InmemTransport.makeRPC(addr)", "undefined: addr"},
		{"example.com/p.InmemTransport.makeRPC(args)", "args is a any, not a string type"},
		{"example.com/p.InmemTransport.makeRPC", "want pkg/path.Type.method(peer)"},
		{"example.com/p.InmemTransport.makeRPC(peers[0])", "want pkg/path.Type.method(peer)"},
	} {
		r, err := parseSend(tc.rule)
		if err == nil {
			_, err = resolveSend(r, pkgs)
		}
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.rule, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tc.rule, err, tc.wantErr)
		}
	}
	mt, err := resolveMember(memberRule{pkg: "example.com/p", typ: "Raft", field: "localID"}, pkgs)
	if err != nil {
		t.Fatal(err)
	}
	for field, wantErr := range map[string]string{"localAddr": "", "addr": "has no field addr", "term": "is a uint64, not a string type"} {
		err := resolveAddress(mt, field)
		if (wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("address %s: %v, want %q", field, err, wantErr)
		}
	}
}
