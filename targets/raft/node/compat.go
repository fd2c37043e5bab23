package main

import (
	"strconv"

	"github.com/hashicorp/raft"
)

// The node program builds against the hashicorp/raft releases that the
// known-bug file (targets/raft/bugs.yaml) runs, v1.3.6 the oldest. Three
// accessors it needs were added to the library later — LeaderWithID in
// v1.3.8, CommitIndex in v1.6.0, CurrentTerm in v1.7.2 — so it reads the
// same values through APIs every one of those releases has: Stats, which
// has reported "term" and "commit_index" since the library's first
// releases, and Leader with the latest configuration.

// currentTerm returns the member's current Raft term (0 when Stats does
// not say).
func currentTerm(r *raft.Raft) uint64 {
	return statUint(r, "term")
}

// commitIndex returns the member's commit index (0 when Stats does not
// say).
func commitIndex(r *raft.Raft) uint64 {
	return statUint(r, "commit_index")
}

func statUint(r *raft.Raft, key string) uint64 {
	v, err := strconv.ParseUint(r.Stats()[key], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// leaderWithID returns the address and ID of the leader this member knows,
// as (*raft.Raft).LeaderWithID does: the ID is the server of the member's
// latest configuration at the leader's address. Both are empty when the
// member knows no leader; the ID alone is empty when the configuration
// cannot be read or holds no server at that address.
func leaderWithID(r *raft.Raft) (raft.ServerAddress, raft.ServerID) {
	addr := r.Leader()
	if addr == "" {
		return "", ""
	}
	f := r.GetConfiguration()
	if f.Error() != nil {
		return addr, ""
	}
	return addr, serverAt(f.Configuration(), addr)
}

// serverAt returns the ID of the server of c at addr ("" if none).
func serverAt(c raft.Configuration, addr raft.ServerAddress) raft.ServerID {
	for _, s := range c.Servers {
		if s.Address == addr {
			return s.ID
		}
	}
	return ""
}
