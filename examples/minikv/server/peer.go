package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gofault/gofault/examples/minikv/transport"
)

// Step handles a peer's message (transport.Handler): the leader's entries,
// heartbeats and snapshots on a follower, forwarded writes and read-index
// requests on the leader.
func (n *Node) Step(ctx context.Context, m transport.Message) (transport.Message, error) {
	switch m.Type {
	case transport.MsgApp, transport.MsgSnap:
		return n.stepFromLeader(ctx, m)
	case transport.MsgProp:
		return n.stepPropose(ctx, m)
	case transport.MsgReadIndex:
		if err := n.leading(); err != nil {
			return transport.Message{}, err
		}
		idx, err := n.readIndex(ctx)
		if err != nil {
			return transport.Message{}, err
		}
		return transport.Message{Index: idx}, nil
	}
	return transport.Message{}, &transport.StatusError{Status: http.StatusBadRequest, Err: fmt.Errorf("unknown message type %d", m.Type)}
}

// leading returns an error unless this node is the leader.
func (n *Node) leading() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.role != roleLeader {
		return &transport.StatusError{Status: http.StatusMisdirectedRequest, Err: fmt.Errorf("not the leader")}
	}
	return nil
}

// stepFromLeader handles the leader's MsgApp or MsgSnap on a follower: a
// heartbeat directly, entries and snapshots in the run loop. Its answer
// carries this process's epoch, so the leader sees a restart.
func (n *Node) stepFromLeader(ctx context.Context, m transport.Message) (transport.Message, error) {
	n.mu.Lock()
	if n.role == roleLeader || !n.heard(m.Epoch) {
		n.mu.Unlock()
		return transport.Message{}, &transport.StatusError{Status: http.StatusConflict, Err: fmt.Errorf("not following %d", m.From)}
	}
	n.takeLease(m.Lease, m.Commit)
	if m.Type == transport.MsgApp && len(m.Payload) == 0 {
		defer n.mu.Unlock()
		n.learnCommit(m.Commit)
		return transport.Message{Index: n.lastIndex(), Epoch: n.epoch}, nil
	}
	n.mu.Unlock()
	ch := make(chan transport.Message, 1)
	select {
	case n.appends <- appendReq{msg: m, reply: ch}:
	case <-ctx.Done():
		return transport.Message{}, ctx.Err()
	}
	select {
	case resp := <-ch:
		resp.Epoch = n.epoch
		return resp, nil
	case <-ctx.Done():
		return transport.Message{}, ctx.Err()
	}
}

// stepPropose handles a forwarded write on the leader.
func (n *Node) stepPropose(ctx context.Context, m transport.Message) (transport.Message, error) {
	var e Entry
	if err := json.Unmarshal(m.Payload, &e); err != nil {
		return transport.Message{}, &transport.StatusError{Status: http.StatusBadRequest, Err: fmt.Errorf("decode proposal: %w", err)}
	}
	if err := n.leading(); err != nil {
		return transport.Message{}, err
	}
	out, err := n.propose(ctx, e)
	if err != nil {
		return transport.Message{}, err
	}
	b, err := json.Marshal(out)
	return transport.Message{Payload: b}, err
}

// installSnapshot replaces a follower's state by the leader's snapshot
// (MsgSnap), which covers entries its log lacks: the data, the request
// table and the applied index, and the log starts after it. The snapshot
// is written to disk first, so a restart finds it. It runs in the run
// loop.
func (n *Node) installSnapshot(m transport.Message) transport.Message {
	n.mu.Lock()
	last, commit := n.lastIndex(), n.commit
	n.mu.Unlock()
	if m.Index <= commit {
		return transport.Message{Index: last} // stale: what it holds is applied here already
	}
	var snap snapshotFile
	if err := json.Unmarshal(m.Payload, &snap); err != nil || snap.Index != m.Index {
		n.log.Warn("bad snapshot", "index", m.Index, "err", err)
		return transport.Message{Reject: true, Index: last}
	}
	if snap.Data == nil {
		snap.Data = map[string]string{}
	}
	if snap.Done == nil {
		snap.Done = map[string]string{}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.bugs.installKeepsRequests || (n.bugs.catchupKeepsRequests && !n.resync) {
		// Only the state machine is restored: the request table stays
		// the follower's own, which lacks the requests of the entries
		// the snapshot stands for.
		snap.Done = n.done
	}
	if n.bugs.rejoinMerge && n.rejoin != 0 && m.Epoch != n.rejoin {
		// A snapshot from a leader process that restarted since this
		// member did only fills in the keys the member lacks: its own
		// values (deleted keys included) and its own request table stay.
		for k, v := range n.data {
			snap.Data[k] = v
		}
		snap.Done = n.done
		n.log.Info("snapshot merged into the state recovered at restart", "index", snap.Index, "leader_epoch", m.Epoch, "followed", n.rejoin)
	}
	snap.Leader = m.Epoch
	b, err := json.Marshal(snap)
	if err == nil {
		err = n.writeSnapshot(snapshotName, b)
	}
	if err != nil {
		n.log.Warn("snapshot install failed", "index", snap.Index, "err", err)
		return transport.Message{Reject: true, Index: last}
	}
	n.data, n.done = snap.Data, snap.Done
	n.entries, n.offset = nil, snap.Index
	n.commit, n.applied, n.snapIndex = snap.Index, snap.Index, snap.Index
	n.resync, n.rejoin = false, 0
	close(n.appliedC)
	n.appliedC = make(chan struct{})
	n.log.Info("snapshot installed", "index", snap.Index, "from", m.From)
	return transport.Message{Index: n.lastIndex()}
}

// sendLeader sends one message to the leader and returns its answer.
func (n *Node) sendLeader(ctx context.Context, m transport.Message) (transport.Message, error) {
	m.To = n.ids[n.cfg.Leader]
	resps, err := n.tr.Send(ctx, []transport.Message{m})
	if err != nil {
		return transport.Message{}, err
	}
	return resps[0], nil
}

func (n *Node) sendPropose(ctx context.Context, e Entry) (string, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return "", err
	}
	resp, err := n.sendLeader(ctx, transport.Message{Type: transport.MsgProp, Payload: body})
	if err != nil {
		if n.bugs.swallowForward && ctx.Err() == nil {
			// The error is logged and dropped: the write counts as
			// delivered, and its client is told it was applied.
			n.log.Warn("forwarded write failed, taken as delivered", "id", e.ID, "err", err)
			return "", nil
		}
		return "", err
	}
	var out string
	if err := json.Unmarshal(resp.Payload, &out); err != nil {
		return "", fmt.Errorf("decode write result: %w", err)
	}
	return out, nil
}

func (n *Node) askReadIndex(ctx context.Context) (uint64, error) {
	resp, err := n.sendLeader(ctx, transport.Message{Type: transport.MsgReadIndex})
	if err != nil {
		return 0, err
	}
	return resp.Index, nil
}
