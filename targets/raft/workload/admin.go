package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofault/gofault/workload"
)

// Guarantee names of the admin operations (checker "violations").
const (
	checkSnapshot   = "snapshot-state"
	checkRestore    = "restore-state"
	checkMembership = "membership"
	checkTransfer   = "transfer"
	checkBarrier    = "barrier-stale"
)

// The operations of RAFT_WORKLOAD_MIX, in its order.
var opNames = []string{"get", "leader-read", "stale-read", "put", "delete", "cas",
	"barrier", "snapshot", "restore", "membership", "transfer"}

// defaultWeights is the default mix, per mille: the key-value operations
// of before (get 30 %, leader and stale reads 10 % each, put 20 %, delete
// 5 %, cas 21.5 %) and, at 50 operations a second on each of three
// clients for 4 s, about 9 barriers, 5 snapshots and 2 to 3 restores,
// membership cycles and leadership transfers a trial.
var defaultWeights = []int{300, 100, 100, 200, 50, 215, 15, 8, 4, 4, 4}

// parseMix reads RAFT_WORKLOAD_MIX ("" is the default mix).
func parseMix(v string) ([]int, error) {
	if v == "" {
		return defaultWeights, nil
	}
	return workload.ParseWeights("RAFT_WORKLOAD_MIX", v, opNames)
}

// admin is the workload's admin operations and what they learned, shared
// by the clients.
type admin struct {
	members []string // every member's name, in GOFAULT_NODES order
	writes  *ledger

	mu sync.Mutex
	// snapshots maps a snapshot state's last command index to its
	// digest and where it was seen.
	snapshots map[uint64]seenState
	// toured is set once the tour of the admin operations has started.
	toured atomic.Bool
	// pending holds the members whose last membership cycle failed:
	// maybe removed, not added back (settle adds them).
	pending map[string]bool
}

// seenState is a state digest and who reported it.
type seenState struct{ digest, where string }

func newAdmin(members []string, writes *ledger) *admin {
	return &admin{members: members, writes: writes, snapshots: map[uint64]seenState{},
		pending: map[string]bool{}}
}

// mix builds the load of weights (in opNames order). The first admin
// operation drawn in a trial runs every admin operation of non-zero
// weight once instead (tour), so that every trial, the fault-free
// baselines the log checker learns from included, calls each.
func (a *admin) mix(w []int) workload.Mix {
	total := 0
	for _, n := range w {
		total += n
	}
	ops := []workload.ExtraOp{
		{Name: "barrier", Percent: w[6], Run: a.barrier},
		{Name: "snapshot", Percent: w[7], Run: a.snapshot},
		{Name: "restore", Percent: w[8], Run: a.restore},
		{Name: "membership", Percent: w[9], Run: a.membership},
		{Name: "transfer", Percent: w[10], Run: a.transfer},
	}
	var tour []workload.ExtraOp
	for _, op := range ops {
		if op.Percent > 0 {
			tour = append(tour, op)
		}
	}
	for i, op := range ops {
		ops[i].Run = func(ctx context.Context, c *workload.KVClient) {
			if a.toured.CompareAndSwap(false, true) {
				for _, op := range tour {
					op.Run(ctx, c)
				}
				return
			}
			op.Run(ctx, c)
		}
	}
	return workload.Mix{
		Get:   w[0],
		Reads: []workload.Read{{Consistency: "leader", Percent: w[1], Progress: true}, {Consistency: "stale", Percent: w[2]}},
		Extra: ops,
		Put:   w[3], Delete: w[4], CAS: w[5], Total: total,
	}
}

// call POSTs an admin call to the client's member and decodes the JSON
// answer into out. A 409 (another admin call running, or the call does
// not apply) is skipped: it returns false and no error.
func call(ctx context.Context, c *workload.KVClient, path string, out any) (bool, error) {
	body, err := c.Do(ctx, http.MethodPost, path, "", "")
	if workload.IsStatus(err, http.StatusConflict) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal([]byte(body), out); err != nil {
		return false, fmt.Errorf("%s: %w in %q", path, err, body)
	}
	return true, nil
}

// snapshotReply is the node's POST /admin/snapshot answer.
type snapshotReply struct {
	Index uint64      `json:"index"`
	State stateDigest `json:"state"`
}

// stateDigest is a state machine's last command index and digest.
type stateDigest struct {
	Index  uint64 `json:"index"`
	Digest string `json:"digest"`
}

// snapshot takes a user snapshot on the client's member; a snapshot's
// state must equal every other state seen at the same command index.
func (a *admin) snapshot(ctx context.Context, c *workload.KVClient) {
	wc := c.Client()
	_ = wc.Do(ctx, "snapshot", "", func(ctx context.Context) error {
		var rep snapshotReply
		ok, err := call(ctx, c, "/admin/snapshot", &rep)
		if ok {
			a.sawState(wc, rep.State, fmt.Sprintf("%s's snapshot at raft index %d", wc.Node(), rep.Index))
		}
		return err
	})
}

// sawState records a state seen at an index and reports a snapshot-state
// violation when another state was seen there (noteState).
func (a *admin) sawState(wc *workload.Client, st stateDigest, where string) {
	if f := a.noteState(st, where); f != nil {
		wc.Violation(f.check, f.msg)
	}
}

// noteState records a state seen at an index; it returns the broken
// guarantee when another state was seen there first.
func (a *admin) noteState(st stateDigest, where string) *finding {
	if st.Index == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	prev, ok := a.snapshots[st.Index]
	if !ok {
		a.snapshots[st.Index] = seenState{st.Digest, where}
		return nil
	}
	if prev.digest == st.Digest {
		return nil
	}
	return &finding{checkSnapshot, fmt.Sprintf("%s holds state %s at command index %d, %s holds %s", where, st.Digest, st.Index, prev.where, prev.digest)}
}

// restoreReply is the node's POST /admin/restore answer.
type restoreReply struct {
	Before         stateDigest `json:"before"`
	Snapshot       stateDigest `json:"snapshot"`
	After          stateDigest `json:"after"`
	RestoresBefore int         `json:"restores_before"`
	RestoresAfter  int         `json:"restores_after"`
}

// judgeRestore checks an acknowledged restore: the snapshot holds the
// state it was taken of, the leader restored it and then holds it. The
// leader held its writes off, so the indexes match; where they do not
// (nothing this service does), nothing is judged.
func judgeRestore(rep restoreReply) []finding {
	var fs []finding
	if rep.Snapshot.Index == rep.Before.Index && rep.Snapshot.Digest != rep.Before.Digest {
		fs = append(fs, finding{checkRestore, fmt.Sprintf("the snapshot of state %s at command index %d holds %s", rep.Before.Digest, rep.Before.Index, rep.Snapshot.Digest)})
	}
	if rep.RestoresAfter <= rep.RestoresBefore {
		fs = append(fs, finding{checkRestore, fmt.Sprintf("restore acknowledged, but the state machine restored no snapshot (%d restores before, %d after)", rep.RestoresBefore, rep.RestoresAfter)})
	}
	if rep.After.Index == rep.Snapshot.Index && rep.After.Digest != rep.Snapshot.Digest {
		fs = append(fs, finding{checkRestore, fmt.Sprintf("restored the snapshot of state %s at command index %d, then held %s", rep.Snapshot.Digest, rep.Snapshot.Index, rep.After.Digest)})
	}
	return fs
}

// restore has the leader snapshot its state and restore the cluster from
// that snapshot (raft.Restore); the restored state is the latest, so the
// write and linearizability checks hold across it.
func (a *admin) restore(ctx context.Context, c *workload.KVClient) {
	wc := c.Client()
	_ = wc.Do(ctx, "restore", "", func(ctx context.Context) error {
		var rep restoreReply
		ok, err := call(ctx, c, "/admin/restore", &rep)
		if ok {
			for _, f := range judgeRestore(rep) {
				wc.Violation(f.check, f.msg)
			}
			a.sawState(wc, rep.Snapshot, "the leader's snapshot for a restore")
		}
		return err
	})
}

// membershipReply is the node's answer of the membership calls.
type membershipReply struct {
	Removed bool     `json:"removed"`
	Added   bool     `json:"added"`
	Voters  []string `json:"voters"`
}

// membership removes a member and adds it back as a voter: the first of
// the members, from one drawn at random on, that is not the leader (the
// leader answers 409 for itself, and for any member while it runs another
// admin call). A cycle that failed leaves the member pending: settle adds
// it back.
func (a *admin) membership(ctx context.Context, c *workload.KVClient) {
	first := c.Rand().IntN(len(a.members))
	for i := range a.members {
		id := a.members[(first+i)%len(a.members)]
		ok := false
		err := c.Client().Do(ctx, "membership", id, func(ctx context.Context) error {
			var rep membershipReply
			var err error
			ok, err = call(ctx, c, "/admin/membership/"+id, &rep)
			a.mu.Lock()
			defer a.mu.Unlock()
			switch {
			case ok:
				delete(a.pending, id)
			case err != nil:
				a.pending[id] = true // maybe removed and not added back
			}
			return err
		})
		if ok || err != nil {
			return
		}
	}
}

// settle adds back, through any member, every member whose membership
// cycle was not acknowledged, retrying within bound.
func (a *admin) settle(ctx context.Context, clients []*workload.KVClient, bound time.Duration) error {
	a.mu.Lock()
	var ids []string
	for id := range a.pending {
		ids = append(ids, id)
	}
	a.mu.Unlock()
	slices.Sort(ids)
	sctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for _, id := range ids {
		for i := 0; sctx.Err() == nil; i++ {
			c := clients[i%len(clients)]
			var rep membershipReply
			err := c.Client().Do(sctx, "add-voter", id, func(ctx context.Context) error {
				_, err := call(ctx, c, "/admin/voter/"+id, &rep)
				return err
			})
			if err == nil && rep.Added {
				a.mu.Lock()
				delete(a.pending, id)
				a.mu.Unlock()
				break
			}
			workload.Sleep(sctx, 200*time.Millisecond)
		}
	}
	return ctx.Err()
}

// judgeVoters checks the configurations of the members at the highest
// applied index: every member is a voter unless its last membership cycle
// is pending, and, when none is, they hold the same voters (a pending
// change may be in some members' logs and not in others').
func judgeVoters(members []string, voters map[string][]string, pending map[string]bool) []finding {
	var fs []finding
	var first string
	for _, m := range slices.Sorted(maps.Keys(voters)) {
		vs := voters[m]
		if first == "" {
			first = m
		} else if len(pending) == 0 && !slices.Equal(vs, voters[first]) {
			fs = append(fs, finding{checkMembership, fmt.Sprintf("caught-up members disagree on the voters: %s has %s, %s has %s", first, strings.Join(voters[first], ","), m, strings.Join(vs, ","))})
		}
		for _, id := range members {
			if !pending[id] && !slices.Contains(vs, id) {
				fs = append(fs, finding{checkMembership, fmt.Sprintf("%s is not a voter in %s's configuration (%s), though every membership change of it was acknowledged", id, m, strings.Join(vs, ","))})
			}
		}
	}
	return fs
}

// transferReply is the node's POST /admin/transfer answer.
type transferReply struct {
	From       string `json:"from"`
	TermBefore uint64 `json:"term_before"`
	TermAfter  uint64 `json:"term_after"`
	RoleAfter  string `json:"role_after"`
}

// judgeTransfer checks an acknowledged leadership transfer: the old
// leader is no longer leader of its term.
func judgeTransfer(rep transferReply) []finding {
	if rep.RoleAfter == "Leader" && rep.TermAfter == rep.TermBefore {
		return []finding{{checkTransfer, fmt.Sprintf("leadership transfer from %s acknowledged, but it is still the leader of term %d", rep.From, rep.TermAfter)}}
	}
	return nil
}

// transfer has the leader hand its leadership over, then waits (a bounded
// request) until the client's member knows a leader of a later term.
func (a *admin) transfer(ctx context.Context, c *workload.KVClient) {
	wc := c.Client()
	var rep transferReply
	var ok bool
	if wc.Do(ctx, "transfer", "", func(ctx context.Context) (err error) {
		ok, err = call(ctx, c, "/admin/transfer", &rep)
		return err
	}) != nil || !ok {
		return
	}
	for _, f := range judgeTransfer(rep) {
		wc.Violation(f.check, f.msg)
	}
	_ = wc.Do(ctx, "transfer-new-leader", "", func(ctx context.Context) error {
		for {
			out, err := c.Do(ctx, http.MethodGet, "/status", "", "")
			var st struct {
				Leader string `json:"leader"`
				Term   uint64 `json:"term"`
			}
			if err == nil && json.Unmarshal([]byte(out), &st) == nil && st.Leader != "" && st.Term > rep.TermBefore {
				return nil
			}
			if !workload.Sleep(ctx, 50*time.Millisecond) {
				return fmt.Errorf("no leader after term %d known: %w", rep.TermBefore, ctx.Err())
			}
		}
	})
}

// barrierReply is the node's POST /admin/barrier answer.
type barrierReply struct {
	Index  uint64         `json:"index"`
	Writes map[string]int `json:"writes"`
}

// judgeBarrier checks the leader's state after a barrier: it holds every
// write acknowledged before the barrier was sent.
func judgeBarrier(rep barrierReply, ackedBefore []string) []finding {
	var missing []string
	for _, id := range ackedBefore {
		if rep.Writes[id] == 0 {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return []finding{{checkBarrier, fmt.Sprintf("after a barrier the leader's state (command index %d) lacks %d writes acknowledged before it: %s", rep.Index, len(missing), sample(missing))}}
}

// barrier sends a Barrier to the leader and checks its state after it.
func (a *admin) barrier(ctx context.Context, c *workload.KVClient) {
	wc := c.Client()
	before := a.writes.ackedIDs()
	_ = wc.Do(ctx, "barrier", "", func(ctx context.Context) error {
		var rep barrierReply
		ok, err := call(ctx, c, "/admin/barrier", &rep)
		if ok {
			for _, f := range judgeBarrier(rep, before) {
				wc.Violation(f.check, f.msg)
			}
		}
		return err
	})
}
