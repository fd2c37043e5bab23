package analysis

import (
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/gofault/gofault/catalog"
)

// CountPartitionSites is PartitionPass's counter: the peer-network calls
// a partition acts on.
const CountPartitionSites = "partition_sites"

// DefaultPeerPackages are the last path elements of the packages that
// hold a target's peer transport when Options.PeerPackages is empty:
// etcd's raft transport.
var DefaultPeerPackages = []string{"rafthttp"}

// PartitionPass finds the calls of the peer network: the dials, reads and
// writes of peer connections and the acceptance of a peer's request, in the
// target's peer-transport packages (Options.PeerPackages, by default those
// named in DefaultPeerPackages). It marks each such site with its operation
// (catalog.Site.Peer) and the partition kind: a partition of a member makes
// the agent fail its dials and stall its reads, writes and accepts until
// the heal, and the site is also a moment where a partition can start.
var PartitionPass = &Pass{
	Name:       "partition",
	Doc:        "peer-network dials, reads, writes and accepts that a partition cuts",
	Requires:   []*Pass{SitesPass},
	ResultType: reflect.TypeFor[*Partition](),
	Run:        runPartition,
}

// Partition is PartitionPass's result: for each site of SitesPass, in the
// same order, its peer operation ("" for a call that is not peer I/O).
type Partition struct {
	Peer []string
}

// contribute marks the peer sites SitesPass contributed (the driver runs
// PartitionPass after it, so they are in the same order).
func (r *Partition) contribute(p *catalog.Parts) {
	for i, op := range r.Peer {
		if op != "" && i < len(p.Sites) {
			p.Sites[i].Peer = op
			p.Sites[i].Kind |= catalog.KindPartition
		}
	}
}

func runPartition(u *Unit) (any, error) {
	sites := u.ResultOf[SitesPass].(*Sites)
	pkgs := u.Options.PeerPackages
	if len(pkgs) == 0 {
		pkgs = DefaultPeerPackages
	}
	res := &Partition{Peer: PeerOps(sites.List, pkgs)}
	for i, op := range res.Peer {
		if op != "" {
			u.Count(sites.List[i].Pkg, CountPartitionSites, 1)
		}
	}
	return res, nil
}

// PeerOps returns, for each site, its peer-network operation, or "" when
// it is no peer I/O. A site is peer I/O when its package is one of pkgs
// (an import path, a pattern ending in "/...", or a last path element) and
// its call does network I/O (Site.IO "net"): a RoundTrip or Dial is a
// dial, a Read, ReadFull, ReadAll or decode a read, a Write, Flush or
// encode a write. The first call of each ServeHTTP method in those
// packages is where a peer's request is accepted.
func PeerOps(sites []catalog.Site, pkgs []string) []string {
	ops := make([]string, len(sites))
	accepted := map[string]int{} // ServeHTTP function → site with the first position
	for i := range sites {
		s := &sites[i]
		if !peerPackage(s.Pkg, pkgs) {
			continue
		}
		if strings.HasSuffix(s.Func, ").ServeHTTP") {
			if j, ok := accepted[s.Pkg+"."+s.Func]; !ok || before(s, &sites[j]) {
				accepted[s.Pkg+"."+s.Func] = i
			}
		}
		if s.IO != "net" {
			continue
		}
		ops[i] = peerOp(s.Callee)
	}
	for _, i := range accepted {
		if ops[i] == "" {
			ops[i] = catalog.PeerAccept
		}
	}
	return ops
}

// before orders sites by position in the source.
func before(a, b *catalog.Site) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

func peerPackage(pkg string, pkgs []string) bool {
	return slices.ContainsFunc(pkgs, func(p string) bool {
		switch {
		case strings.HasSuffix(p, "/..."):
			base := strings.TrimSuffix(p, "/...")
			return pkg == base || strings.HasPrefix(pkg, base+"/")
		case strings.Contains(p, "/") || strings.Contains(p, "."):
			return pkg == p
		}
		return path.Base(pkg) == p
	})
}

// peerOp classifies a network call by its callee's name.
func peerOp(callee string) string {
	name := callee
	if i := strings.LastIndexAny(name, ".)"); i >= 0 {
		name = name[i+1:]
	}
	lower := strings.ToLower(name)
	switch {
	case strings.Contains(lower, "roundtrip"), strings.Contains(lower, "dial"), lower == "do", lower == "post", lower == "get":
		return catalog.PeerDial
	case strings.HasPrefix(lower, "read"), strings.HasPrefix(lower, "decode"), lower == "recv":
		return catalog.PeerRead
	case strings.HasPrefix(lower, "write"), strings.HasPrefix(lower, "encode"), lower == "flush", lower == "send":
		return catalog.PeerWrite
	}
	return ""
}
