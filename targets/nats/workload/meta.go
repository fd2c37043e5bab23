package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gofault/gofault/workload"
)

// A server whose JetStream meta layer stopped on a write error before the
// workload's streams exist leaves the cluster unable to host them, by
// nats-server's design, not by a bug:
//
//   - a Raft node that fails to write shuts itself down for good
//     (raft.go setWriteErrLocked: "Critical write error", n.shutdown()),
//     and the server's /healthz says so ("JetStream meta layer write
//     error: …"); that server hosts no replica until it restarts, and the
//     workload's streams and consumers have three;
//   - if its meta node stopped before the meta group's first election, the
//     other two never elect a leader: a server whose log is empty cannot
//     tell a brand-new cluster from a wiped disk, so an empty server's
//     vote counts only when every server votes, and the meta group never
//     relaxes that for a new cluster (it starts with
//     RaftConfig.Recovering, so never "initializing"): raft.go
//     runAsCandidate ("Empty servers must never form quorum among
//     themselves"), jetstream_cluster.go setupMetaGroup; nats-server pull
//     request #7038, "NRG: Empty log & partial catchup protection";
//   - if it stopped right after the first election, the meta group, which
//     starts from its leader alone and adds the others one membership
//     change at a time, either formed without it (and an R3 stream has
//     "no suitable peers for placement") or is wedged with the stopped
//     server's own addition pending: that change needs the stopped server
//     to commit, no other change starts before it, and the third server's
//     votes and acks do not count until it is added (raft.go trackPeer,
//     trackResponse, shouldCountVoteFromPeer).
//
// Or, when the stopped server led the meta group, the others elect
// another leader and place three-replica streams on all three servers, the
// stopped one's replicas never starting (replay 19-11). Either way the
// workload's streams cannot have their three replicas until the server
// restarts.
// The workload recognises the state from the servers' own reports
// (metaOutage) and then has nothing to load or check.

// metaWait bounds how long the setup waits for the meta group's first
// leader; a fault-free cluster elects within a second.
const metaWait = 10 * time.Second

// metaView is one server's report on the JetStream meta group.
type metaView struct {
	node string
	// answered: the server answered /raftz with its meta group, whose
	// everLeader says whether the group ever knew a leader.
	answered, everLeader bool
	// health is the server's /healthz error, "" when healthy.
	health string
}

// metaWriteError is what /healthz says about a meta Raft node stopped on
// a write error (monitor.go healthz).
const metaWriteError = "JetStream meta layer write error"

// jsDisabled is what /healthz says of a server whose JetStream is off.
// Every server of the profile starts with JetStream on, so during a trial
// it means the server turned it off: nats-server does so when a store runs
// out of disk or memory ("JetStream out of resources, will be DISABLED",
// jetstream.go), which stops its meta Raft node like a write error does.
const jsDisabled = "JetStream not enabled"

// metaOutage says why the cluster cannot host the workload's
// three-replica streams by nats-server's design, or "" when it may: a
// server admits that its meta layer stopped on a write error, or that it
// turned JetStream off.
func metaOutage(views []metaView) string {
	var stopped, waiting []string
	leader := false
	for _, v := range views {
		switch {
		case strings.Contains(v.health, metaWriteError), strings.Contains(v.health, jsDisabled):
			stopped = append(stopped, fmt.Sprintf("%s (healthz: %s)", v.node, v.health))
		case v.answered && !v.everLeader:
			waiting = append(waiting, v.node)
		default:
			leader = leader || v.everLeader
		}
	}
	if len(stopped) == 0 {
		return ""
	}
	sort.Strings(stopped)
	sort.Strings(waiting)
	why := strings.Join(stopped, ", ") + " stopped its JetStream meta Raft node on a write error (or turned JetStream off when a store ran out of resources), for good: it hosts no replica until it restarts, and the workload's streams have three"
	if !leader && len(waiting) > 0 && len(stopped)+len(waiting) == len(views) {
		why += fmt.Sprintf("; the meta group never had a leader and cannot elect one: %s have empty logs, whose votes count only when every server votes (nats-server's empty-log protection)", strings.Join(waiting, ", "))
	}
	return why
}

// metaView asks the client's server about its meta group: /raftz, and
// only when that has no meta group (a stopped Raft node unregisters), its
// /healthz for the reason. Not /healthz every time: its meta check waits
// 10 ms for the applier and warns "Falling behind in health check" when
// it lags (raft.go isCurrent), which polling during the setup's stream
// and consumer creation, while the meta group applies their assignments,
// made happen in a quarter of the trials.
func (c *client) metaView(ctx context.Context) metaView {
	v := metaView{node: c.wc.Node()}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var rz map[string]map[string]struct {
		EverHadLeader bool `json:"ever_had_leader"`
	}
	if _, err := c.getAny(rctx, "/raftz?group=_meta_", &rz); err == nil {
		for _, groups := range rz {
			if g, ok := groups["_meta_"]; ok {
				v.answered, v.everLeader = true, g.EverHadLeader
			}
		}
	}
	if v.answered {
		return v
	}
	var h struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if _, err := c.getAny(rctx, "/healthz", &h); err != nil {
		v.health = err.Error()
	} else {
		v.health = h.Error
	}
	return v
}

// getAny fetches one JSON document from the server's monitoring endpoint
// whatever the status (/healthz answers 503 with its reason) and returns
// the status.
func (c *client) getAny(ctx context.Context, path string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.monitor+path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return resp.StatusCode, fmt.Errorf("GET %s: %s: %w", path, resp.Status, err)
	}
	return resp.StatusCode, nil
}

// metaViews asks every server about its meta group.
func metaViews(ctx context.Context, clients []*client) []metaView {
	views := make([]metaView, len(clients))
	workload.Each(clients, func(c *client) error {
		views[c.index(clients)] = c.metaView(ctx)
		return nil
	})
	return views
}

// waitMeta waits, for at most metaWait, until some server's meta group
// has known a leader; it returns metaOutage's reason as soon as a complete
// round of reports has one, else "".
func waitMeta(ctx context.Context, clients []*client) string {
	wctx, cancel := context.WithTimeout(ctx, metaWait)
	defer cancel()
	for {
		views := metaViews(wctx, clients)
		if wctx.Err() != nil {
			// This round's requests may have been cut short.
			return ""
		}
		if why := metaOutage(views); why != "" {
			return why
		}
		for _, v := range views {
			if v.everLeader {
				return ""
			}
		}
		slog.Info("no JetStream meta leader yet", "views", fmt.Sprintf("%+v", views))
		workload.Sleep(wctx, 250*time.Millisecond)
	}
}

// outageError carries metaOutage's reason.
type outageError struct{ why string }

func (e *outageError) Error() string { return "no JetStream for the workload by design: " + e.why }

// watchMeta runs fn under a context that it cancels, with an outageError
// as the cause, once a round of the servers' reports has metaOutage's
// reason: fn's Setup calls then give up without reporting (their context
// was cancelled), so creating streams and consumers that the cluster
// cannot host is not reported as the system's failure. It returns fn's
// error, or the outageError.
func watchMeta(ctx context.Context, clients []*client, fn func(ctx context.Context) error) error {
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-wctx.Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
			views := metaViews(wctx, clients)
			if wctx.Err() != nil {
				return
			}
			if why := metaOutage(views); why != "" {
				cancel(&outageError{why: why})
				return
			}
		}
	}()
	err := fn(wctx)
	close(done)
	<-stopped
	var oe *outageError
	if errors.As(context.Cause(wctx), &oe) {
		return oe
	}
	return err
}
