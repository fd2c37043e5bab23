package campaign

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/gofault/gofault/agent/durable"
	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/cluster"
	"github.com/gofault/gofault/config"
)

// Power-loss crashes (faults.kinds: [powerloss]): the nodes' agents keep a
// durable image of their data dirs (agent/durable), recorded before every
// sync site's call, and a power-loss crash rolls the killed node's data
// dir back to it before the restart.

// syncSites returns the indices of the catalog's sites that sync a file or
// a directory and nothing else: (*os.File).Sync and the fsync/fdatasync
// functions (syscall, x/sys/unix, etcd's fileutil). A site that writes and
// syncs in one call (ioutil.WriteAndSyncFile, a bbolt commit) is not one:
// its hook runs before the write, so recording the image there would take
// the old content as synced.
func syncSites(cat *catalog.Catalog) []uint32 {
	var out []uint32
	for i := range cat.Sites {
		s := &cat.Sites[i]
		if s.IO != "disk" {
			continue
		}
		name := s.Callee[strings.LastIndex(s.Callee, ".")+1:]
		if s.Callee == "(*os.File).Sync" || name == "Fsync" || name == "Fdatasync" {
			out = append(out, s.Index)
		}
	}
	return out
}

// losesPower reports whether kinds names a power loss, at or after a call.
func losesPower(kinds []string) bool {
	return slices.Contains(kinds, catalog.KindPowerLoss.String()) || slices.Contains(kinds, catalog.KindPowerLossAfter.String())
}

// powerLossEnv adds to the nodes' environment what their agents need to
// keep the durable image, when the campaign may inject a power loss (at or
// after a call).
func powerLossEnv(nodes cluster.Nodes, kinds []string, cat *catalog.Catalog) cluster.Nodes {
	if !losesPower(kinds) || cat == nil {
		return nodes
	}
	sites := syncSites(cat)
	if len(sites) == 0 {
		return nodes // no sync is seen: a power loss is a plain crash
	}
	list := make([]string, len(sites))
	for i, s := range sites {
		list[i] = strconv.FormatUint(uint64(s), 10)
	}
	env := make(map[string]string, len(nodes.Env)+2)
	for k, v := range nodes.Env {
		env[k] = v
	}
	env[wire.EnvPowerLoss] = "{{.Dir}}"
	env[wire.EnvSyncSites] = strings.Join(list, ",")
	nodes.Env = env
	return nodes
}

// stopForPowerLoss freezes a node that is about to lose power (SIGSTOP:
// its writes stop where they are) and records how far its descriptors
// have written (durable.RecordCrash), so that the rollback also loses what
// a log appended into preallocated space since its last sync. The kill
// that follows ends the stopped process as any other.
func stopForPowerLoss(cl *cluster.Cluster, node string) error {
	pid := cl.PID(node)
	if pid <= 0 {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("stop %s: %w", node, err)
	}
	for _, v := range cl.Nodes() {
		if v.Name == node {
			return durable.RecordCrash(pid, v.Dir)
		}
	}
	return nil
}

// rollBack turns a killed node's data dir back to its durable image.
func rollBack(cl *cluster.Cluster, node string, faults config.Faults) (durable.Stats, error) {
	for _, v := range cl.Nodes() {
		if v.Name == node {
			return durable.RollBack(v.Dir, durable.Scope(faults.PowerLossPaths))
		}
	}
	return durable.Stats{}, nil
}
