package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// The admin API: the whole of hashicorp/raft's operator calls, as services
// built on it expose them (Consul's snapshot save/restore, operator raft
// remove-peer, transfer-leader). Loopback clients only (403 otherwise).
// Every call is bounded by applyTimeout (a restore by twice that); the
// calls that act on the leader are forwarded to it like writes, and the
// leader runs one at a time (409 when another is running).
//
//	POST /admin/snapshot          a user snapshot (raft.Snapshot) on this member, opened
//	                              and decoded: snapshotReply; 409 when raft has nothing
//	                              to snapshot or a configuration change is uncommitted
//	POST /admin/restore           leader: Barrier, user snapshot, raft.Restore of it
//	                              with writes held off: restoreReply
//	POST /admin/membership/{id}   leader: RemoveServer(id), then AddVoter(id) (only
//	                              the latter when id is not a voter): membershipReply;
//	                              409 when id is the leader, or when a member that
//	                              stays a voter is not caught up (behind)
//	POST /admin/voter/{id}        leader: AddVoter(id): membershipReply
//	POST /admin/transfer          leader: LeadershipTransfer: transferReply
//	POST /admin/barrier           leader: Barrier, then the state: barrierReply
//	POST /admin/window/{op}       a restore, membership change or transfer is coming
//	                              (the leader tells every member first; adminLogger)
func (s *server) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /admin/snapshot", s.loopback(s.userSnapshot))
	mux.HandleFunc("POST /admin/restore", s.loopback(s.onLeader(s.restore)))
	mux.HandleFunc("POST /admin/membership/{id}", s.loopback(s.onLeader(s.membership(true))))
	mux.HandleFunc("POST /admin/voter/{id}", s.loopback(s.onLeader(s.membership(false))))
	mux.HandleFunc("POST /admin/transfer", s.loopback(s.onLeader(s.transfer)))
	mux.HandleFunc("POST /admin/barrier", s.loopback(s.onLeader(s.barrier)))
	mux.HandleFunc("POST /admin/window/{op}", s.loopback(s.window))
}

// windowSpan is how long an admin call's consequences are expected on
// every member (adminLogger): two raft calls' bounds and a second's grace.
const windowSpan = 2*applyTimeout + time.Second

// window tells this member's logger an admin call (restore, membership,
// transfer) is coming (adminLogger).
func (s *server) window(w http.ResponseWriter, r *http.Request) {
	op := r.PathValue("op")
	if s.windows != nil {
		if s.windows.of(op) == nil {
			http.Error(w, "no admin call "+op, http.StatusNotFound)
			return
		}
		s.windows.open(op, windowSpan)
	}
	io.WriteString(w, "ok")
}

// announce tells every member's logger, this one's included, the admin
// call op is coming; best effort, within 300 ms.
func (s *server) announce(ctx context.Context, op string) {
	if s.windows == nil {
		return
	}
	s.windows.open(op, windowSpan)
	ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range s.peers {
		if p.id == s.id {
			continue
		}
		wg.Go(func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.httpAddr+"/admin/window/"+op, nil)
			if err != nil {
				return
			}
			if resp, err := s.http.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

// loopback refuses a request that does not come from a loopback address.
func (s *server) loopback(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			http.Error(w, "admin calls from loopback only", http.StatusForbidden)
			return
		}
		h(w, r)
	}
}

// onLeader forwards the request to the leader unless this member is it;
// the leader runs one admin call at a time.
func (s *server) onLeader(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.raft.State() != raft.Leader {
			s.forward(w, r, nil)
			return
		}
		if !s.adminBusy.TryLock() {
			http.Error(w, "another admin call is running", http.StatusConflict)
			return
		}
		defer s.adminBusy.Unlock()
		h(w, r)
	}
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// snapshotReply is POST /admin/snapshot's answer: the snapshot raft wrote,
// read back through the snapshot store and decoded.
type snapshotReply struct {
	Index uint64 `json:"index"` // raft's index of the snapshot
	Term  uint64 `json:"term"`
	// State is the decoded snapshot's state: its last command's index and
	// its digest.
	State fsmStatus `json:"state"`
}

func (s *server) userSnapshot(w http.ResponseWriter, _ *http.Request) {
	f := s.raft.Snapshot()
	if err := f.Error(); err != nil {
		code := http.StatusServiceUnavailable
		// Nothing applied yet, or a configuration change not yet
		// committed (raft refuses to snapshot then): not now.
		if errors.Is(err, raft.ErrNothingNewToSnapshot) || strings.Contains(err.Error(), "wait until the configuration entry") {
			code = http.StatusConflict
		}
		http.Error(w, "snapshot: "+err.Error(), code)
		return
	}
	meta, st, _, err := openSnapshot(f)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	reply(w, snapshotReply{Index: meta.Index, Term: meta.Term, State: st.status(false)})
}

// openSnapshot reads a user snapshot back and decodes it into a fresh
// state machine; it also returns the snapshot's bytes.
func openSnapshot(f raft.SnapshotFuture) (*raft.SnapshotMeta, *fsm, []byte, error) {
	meta, rc, err := f.Open()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open snapshot: %w", err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read snapshot %s: %w", meta.ID, err)
	}
	st := newFSM()
	if err := st.Restore(io.NopCloser(bytes.NewReader(b))); err != nil {
		return nil, nil, nil, fmt.Errorf("snapshot %s: %w", meta.ID, err)
	}
	return meta, st, b, nil
}

// restoreReply is POST /admin/restore's answer: the state the leader had
// before (after a Barrier, writes held off), the snapshot's, and the
// leader's after raft.Restore (before any new write).
type restoreReply struct {
	Before   fsmStatus `json:"before"`
	Snapshot fsmStatus `json:"snapshot"`
	After    fsmStatus `json:"after"`
	// Restores counts the state machine's restores, before and after.
	RestoresBefore int `json:"restores_before"`
	RestoresAfter  int `json:"restores_after"`
}

// restore snapshots the leader's state and restores the cluster from that
// snapshot (raft.Restore: the leader takes it, followers install it). The
// writes this leader would apply meanwhile are held off, so the restored
// state is the latest: no acknowledged write is undone.
func (s *server) restore(w http.ResponseWriter, r *http.Request) {
	s.writes.Lock()
	defer s.writes.Unlock()
	s.announce(r.Context(), opRestore)
	if err := s.raft.Barrier(applyTimeout).Error(); err != nil {
		http.Error(w, "restore: barrier: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	var rep restoreReply
	rep.Before, rep.RestoresBefore = s.fsm.status(false), s.fsm.restoreCount()
	f := s.raft.Snapshot()
	if err := f.Error(); err != nil {
		http.Error(w, "restore: snapshot: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	meta, st, b, err := openSnapshot(f)
	if err != nil {
		http.Error(w, "restore: "+err.Error(), http.StatusInternalServerError)
		return
	}
	rep.Snapshot = st.status(false)
	if err := s.raft.Restore(meta, bytes.NewReader(b), 2*applyTimeout); err != nil {
		http.Error(w, "restore: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	rep.After, rep.RestoresAfter = s.fsm.status(false), s.fsm.restoreCount()
	reply(w, rep)
}

// membershipReply is the answer of the membership calls: what was done
// and the leader's configuration after.
type membershipReply struct {
	Removed bool     `json:"removed"` // RemoveServer succeeded
	Added   bool     `json:"added"`   // AddVoter succeeded
	Voters  []string `json:"voters"`  // the leader's latest configuration's voters, sorted
}

// membership removes member id and adds it back as a voter (cycle), or
// only adds it (a member left out by a cycle whose AddVoter failed).
func (s *server) membership(cycle bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := raft.ServerID(r.PathValue("id"))
		var addr raft.ServerAddress
		for _, p := range s.peers {
			if p.id == id {
				addr = p.raftAddr
			}
		}
		if addr == "" {
			http.Error(w, "no member "+string(id), http.StatusNotFound)
			return
		}
		if cycle && id == s.id {
			http.Error(w, string(id)+" is the leader", http.StatusConflict)
			return
		}
		var rep membershipReply
		voters, err := s.voters()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		if cycle && slices.Contains(voters, string(id)) {
			// Like an operator (or Consul's autopilot), remove a voter only
			// while the voters that stay are caught up: with one of them
			// behind, the smaller configuration would have no quorum.
			if why := s.behind(r.Context(), id); why != "" {
				http.Error(w, "not now: "+why, http.StatusConflict)
				return
			}
		}
		s.announce(r.Context(), opMembership)
		if cycle && slices.Contains(voters, string(id)) {
			if err := s.raft.RemoveServer(id, 0, applyTimeout).Error(); err != nil {
				http.Error(w, "remove "+string(id)+": "+err.Error(), http.StatusServiceUnavailable)
				return
			}
			rep.Removed = true
		}
		if err := s.raft.AddVoter(id, addr, 0, applyTimeout).Error(); err != nil {
			http.Error(w, fmt.Sprintf("add %s (removed %v): %v", id, rep.Removed, err), http.StatusServiceUnavailable)
			return
		}
		rep.Added = true
		if rep.Voters, err = s.voters(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		reply(w, rep)
	}
}

// maxLag is how many entries behind the leader's applied index a member
// may be and still count as caught up.
const maxLag = 32

// behind asks every member but this one (the leader) and the one to be
// removed for its applied index, within 300 ms; it returns why one is not
// caught up (did not answer, answered an error, or is more than maxLag
// entries behind), or "".
func (s *server) behind(ctx context.Context, removed raft.ServerID) string {
	ctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	applied := s.raft.AppliedIndex()
	for _, p := range s.peers {
		if p.id == s.id || p.id == removed {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.httpAddr+"/status", nil)
		if err != nil {
			return err.Error()
		}
		resp, err := s.http.Do(req)
		if err != nil {
			return fmt.Sprintf("%s did not answer: %v", p.id, err)
		}
		var st statusReply
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return fmt.Sprintf("%s answered %s", p.id, resp.Status)
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil {
			return fmt.Sprintf("%s's status: %v", p.id, err)
		}
		if st.Applied+maxLag < applied {
			return fmt.Sprintf("%s applied %d, the leader %d", p.id, st.Applied, applied)
		}
	}
	return ""
}

// voters returns the voters of the member's latest configuration, sorted.
func (s *server) voters() ([]string, error) {
	f := s.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	var vs []string
	for _, sv := range f.Configuration().Servers {
		if sv.Suffrage == raft.Voter {
			vs = append(vs, string(sv.ID))
		}
	}
	slices.Sort(vs)
	return vs, nil
}

// transferReply is POST /admin/transfer's answer: the old leader's term
// before and its role and term once the transfer returned.
type transferReply struct {
	From       string `json:"from"`
	TermBefore uint64 `json:"term_before"`
	TermAfter  uint64 `json:"term_after"`
	RoleAfter  string `json:"role_after"`
}

// transfer hands leadership over. The leader's writes and consistent
// reads are held off meanwhile: raft refuses writes during a transfer
// anyway, and a VerifyLeader racing it would make the old leader log that
// it steps down for a new leader (a warning the log checker would see in
// some trials and not others).
func (s *server) transfer(w http.ResponseWriter, r *http.Request) {
	s.writes.Lock()
	defer s.writes.Unlock()
	s.announce(r.Context(), opTransfer)
	if s.windows != nil {
		s.windows.open(opTransfer, time.Hour)
		// The old leader's replication may learn the new term a little
		// after the transfer returned: a grace of an election timeout.
		defer s.windows.open(opTransfer, s.electionTimeout)
	}
	rep := transferReply{From: string(s.id), TermBefore: currentTerm(s.raft)}
	if err := s.raft.LeadershipTransfer().Error(); err != nil {
		http.Error(w, "leadership transfer: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	awaitStepDown(s.raft, s.electionTimeout)
	rep.TermAfter, rep.RoleAfter = currentTerm(s.raft), s.raft.State().String()
	reply(w, rep)
}

// awaitStepDown waits, up to d, until r no longer leads. From v1.6.1 on
// (hashicorp/raft #581) LeadershipTransfer itself answers only once the
// leader left its leader loop, or fails after an election timeout, so
// this returns at once; the releases before answer as soon as the target
// was told to campaign, while the old leader still leads its term until
// the target's vote request reaches it. Waiting here as v1.6.1 does lets
// the workload's transfer check judge every release alike: a leader that
// still leads an election timeout after an acknowledged transfer is
// reported on each.
func awaitStepDown(r *raft.Raft, d time.Duration) {
	deadline := time.Now().Add(d)
	for r.State() == raft.Leader && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// barrierReply is POST /admin/barrier's answer: the leader's state once
// its Barrier returned, with its write counts.
type barrierReply struct {
	fsmStatus
}

func (s *server) barrier(w http.ResponseWriter, _ *http.Request) {
	if err := s.raft.Barrier(applyTimeout).Error(); err != nil {
		http.Error(w, "barrier: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	reply(w, barrierReply{s.fsm.status(true)})
}
