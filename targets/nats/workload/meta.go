package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"
)

// A JetStream cluster whose meta group never elected a leader, and one of
// whose servers stopped its meta Raft node on a write error, stays without
// a meta leader by nats-server's design, not by a bug:
//
//   - a Raft node that fails to write shuts itself down for good
//     (raft.go setWriteErrLocked: "Critical write error", n.shutdown()),
//     and the server's /healthz says so ("JetStream meta layer write
//     error: …");
//   - a server whose log is empty cannot tell a brand-new cluster from a
//     wiped disk, so an empty server's vote counts only when every server
//     votes, and the meta group never relaxes that for a new cluster (it
//     starts with RaftConfig.Recovering, so never "initializing"):
//     raft.go runAsCandidate ("Empty servers must never form quorum among
//     themselves"), jetstream_cluster.go setupMetaGroup; nats-server
//     pull request #7038, "NRG: Empty log & partial catchup protection".
//
// So the other two servers vote for each other term after term and never
// win, and every JetStream request answers 503 until the stopped server is
// restarted. The workload recognises that state from the servers' own
// reports (metaOutage) and then has nothing to load or check.

// metaWait bounds how long the setup waits for the meta group's first
// leader before it looks for an admitted outage; a fault-free cluster
// elects within a second.
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

// metaOutage says why the meta group cannot elect its first leader, by
// nats-server's design, or "" when it may: a server admits that its meta
// layer stopped on a write error, and every other server answers that its
// meta group never had a leader.
func metaOutage(views []metaView) string {
	var stopped, waiting []string
	for _, v := range views {
		switch {
		case strings.Contains(v.health, metaWriteError):
			stopped = append(stopped, fmt.Sprintf("%s (healthz: %s)", v.node, v.health))
		case v.answered && !v.everLeader:
			waiting = append(waiting, v.node)
		default:
			return "" // a leader was known, or a server did not say
		}
	}
	if len(stopped) == 0 || len(waiting) == 0 {
		return ""
	}
	sort.Strings(stopped)
	sort.Strings(waiting)
	return fmt.Sprintf("JetStream meta group never had a leader and cannot elect one: %s stopped its meta Raft node on a write error; %s have empty logs, whose votes count only when every server votes (nats-server's empty-log protection)",
		strings.Join(stopped, ", "), strings.Join(waiting, ", "))
}

// metaView asks the client's server about its meta group.
func (c *client) metaView(ctx context.Context) metaView {
	v := metaView{node: c.wc.Node()}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var h struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := c.getAny(rctx, "/healthz", &h); err != nil {
		v.health = err.Error()
	} else {
		v.health = h.Error
	}
	var rz map[string]map[string]struct {
		EverHadLeader bool `json:"ever_had_leader"`
	}
	if c.getAny(rctx, "/raftz?group=_meta_", &rz) == nil {
		for _, groups := range rz {
			if g, ok := groups["_meta_"]; ok {
				v.answered, v.everLeader = true, g.EverHadLeader
			}
		}
	}
	return v
}

// getAny fetches one JSON document from the server's monitoring endpoint
// whatever the status (/healthz answers 503 with its reason).
func (c *client) getAny(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.monitor+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %s: %w", path, resp.Status, err)
	}
	return nil
}

// waitMeta waits, for at most metaWait, until some server's meta group
// has known a leader; it returns metaOutage's reason when none has and,
// in the last complete round of reports, none can; else "".
func waitMeta(ctx context.Context, clients []*client) string {
	wctx, cancel := context.WithTimeout(ctx, metaWait)
	defer cancel()
	why := ""
	for {
		views := make([]metaView, len(clients))
		each(clients, func(c *client) error {
			views[c.index(clients)] = c.metaView(wctx)
			return nil
		})
		if wctx.Err() != nil {
			// This round's requests may have been cut short: the last
			// complete round decides.
			if ctx.Err() != nil {
				return ""
			}
			return why
		}
		for _, v := range views {
			if v.everLeader {
				return ""
			}
		}
		why = metaOutage(views)
		if why == "" {
			slog.Info("no JetStream meta leader yet", "views", fmt.Sprintf("%+v", views))
		}
		sleep(wctx, 250*time.Millisecond)
	}
}
