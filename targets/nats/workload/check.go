package main

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// Guarantee names reported with violations (checker "violations"; stable,
// for known-bug files).
const (
	checkLost      = "message-lost"
	checkDuplicate = "message-duplicated"
	checkRecovery  = "recovery"
	// A resource served through some servers, not through another.
	checkStreamStalled   = "stream-stalled"
	checkConsumerStalled = "consumer-stalled"
	// A resource served through no server while another was served.
	checkStreamUnavailable   = "stream-unavailable"
	checkConsumerUnavailable = "consumer-unavailable"
)

// finding is one broken guarantee; node, when set, is the server it is
// about (the violation is reported through that server's client).
type finding struct{ check, msg, node string }

// pubAck is one acknowledged publish: the stream and sequence the server
// said it stored the message at.
type pubAck struct {
	seq uint64
	id  string
}

// streamRead is what reading a stream back returned: the message ID at
// each sequence, over first..last of the stream's state at the time.
type streamRead struct {
	first, last uint64
	ids         map[uint64]string
}

// checkMessages judges one stream: every acknowledged message at or above
// the stream's first sequence (below it, the stream's limits may have
// discarded it) must be read back at the sequence its ack named, and no
// message may be stored at two sequences. Two acks naming one sequence
// for different messages lose one of them. conflicts are sequences at
// which consumers were delivered different messages.
func checkMessages(stream string, acks []pubAck, read streamRead, conflicts []string) []finding {
	var lost []string
	bySeq := map[uint64]string{}
	for _, a := range acks {
		if other, ok := bySeq[a.seq]; ok && other != a.id {
			lost = append(lost, fmt.Sprintf("%s and %s both acknowledged at %d", other, a.id, a.seq))
			continue
		}
		bySeq[a.seq] = a.id
		if a.seq < read.first {
			continue
		}
		switch got, ok := read.ids[a.seq]; {
		case a.seq > read.last:
			lost = append(lost, fmt.Sprintf("%s acknowledged at %d, after the stream's last sequence %d", a.id, a.seq, read.last))
		case !ok:
			lost = append(lost, fmt.Sprintf("%s acknowledged at %d, not read back", a.id, a.seq))
		case got != a.id:
			lost = append(lost, fmt.Sprintf("%s acknowledged at %d, %s read back there", a.id, a.seq, got))
		}
	}
	lost = append(lost, conflicts...)
	seqs := map[string][]uint64{}
	for seq, id := range read.ids {
		seqs[id] = append(seqs[id], seq)
	}
	var dup []string
	for id, ss := range seqs {
		if len(ss) > 1 {
			slices.Sort(ss)
			dup = append(dup, fmt.Sprintf("%s at %v", id, ss))
		}
	}
	var fs []finding
	if len(lost) > 0 {
		fs = append(fs, finding{check: checkLost, msg: fmt.Sprintf("stream %s (first %d, last %d): %d acknowledged messages lost: %s", stream, read.first, read.last, len(lost), sample(lost))})
	}
	if len(dup) > 0 {
		fs = append(fs, finding{check: checkDuplicate, msg: fmt.Sprintf("stream %s: %d messages stored more than once: %s", stream, len(dup), sample(dup))})
	}
	return fs
}

// resource is one thing the workload needs the cluster to serve after the
// load: a stream (a publish to it is acknowledged) or a durable consumer
// on a stream (a fetch from it delivers a message).
type resource struct {
	// consumer is the durable's name, "" for the stream itself.
	stream, consumer string
}

// String names the resource as findings do: "stream S1" or "consumer
// c-n1 on S1".
func (r resource) String() string {
	if r.consumer == "" {
		return "stream " + r.stream
	}
	return "consumer " + r.consumer + " on " + r.stream
}

// durableName is the name of the durable consumer that the client of the
// server creates on every stream.
func durableName(server string) string { return "c-" + server }

// resources lists every stream and, after each, its durable consumers.
func resources(streams, consumers []string) []resource {
	var rs []resource
	for _, st := range streams {
		rs = append(rs, resource{stream: st})
		for _, d := range consumers {
			rs = append(rs, resource{stream: st, consumer: d})
		}
	}
	return rs
}

// probe is what trying one resource through one server after the load
// found: whether a try succeeded within the recovery bound, how many tries
// were made and the last try's error.
type probe struct {
	ok    bool
	tries int
	err   string
}

// judgeRecovery judges the tries after the load: got[server][resource]
// is what trying the resource through the server found. A consumer is
// judged only through servers that accepted a publish to its stream (that
// publish is a message the consumer has not delivered yet); a consumer on
// a stream that accepted nothing is the stream's finding.
//
//   - recovery: a server through which no stream accepted a publish did
//     not recover;
//   - stream-stalled, consumer-stalled: a resource served through some
//     servers but not through another that recovered;
//   - stream-unavailable, consumer-unavailable: a resource served through
//     no server at all while another resource (not one of its own
//     consumers) was served — a partial failure, not a dead cluster. It is
//     reported whether or not some servers are down: a server that
//     accepts nothing does not excuse a resource that nobody serves.
func judgeRecovery(servers []string, rs []resource, got map[string]map[string]probe) []finding {
	var fs []finding
	down := map[string]bool{}
	for _, srv := range servers {
		served := false
		for _, r := range rs {
			served = served || (r.consumer == "" && got[srv][r.String()].ok)
		}
		if !served {
			down[srv] = true
			fs = append(fs, finding{checkRecovery, fmt.Sprintf("server %s accepted no publish to any stream after the load", srv), srv})
		}
	}
	for _, r := range rs {
		var good, bad, tried []string
		for _, srv := range servers {
			if r.consumer != "" && !got[srv][resource{stream: r.stream}.String()].ok {
				continue
			}
			tried = append(tried, srv)
			switch {
			case got[srv][r.String()].ok:
				good = append(good, srv)
			case !down[srv]:
				bad = append(bad, srv)
			}
		}
		stalled, unavailable := checkStreamStalled, checkStreamUnavailable
		if r.consumer != "" {
			stalled, unavailable = checkConsumerStalled, checkConsumerUnavailable
		}
		switch {
		case len(good) > 0 && len(bad) > 0:
			fs = append(fs, finding{stalled, fmt.Sprintf("%s %s through %s but not through %s after the load (%s)",
				r, servedVerb(r), strings.Join(good, ", "), strings.Join(bad, ", "), tries(r, bad, got)), bad[0]})
		case len(good) == 0 && len(tried) > 0:
			other, where := otherServed(r, rs, servers, got)
			if other == "" {
				continue // nothing served: the servers' findings say so
			}
			node := tried[0]
			if r.consumer != "" {
				// The durable's own client reports it when it was tried.
				for _, srv := range tried {
					if durableName(srv) == r.consumer {
						node = srv
					}
				}
			}
			fs = append(fs, finding{unavailable, fmt.Sprintf("%s %s through no server after the load, while %s was served through %s: tried %s",
				r, servedVerb(r), other, strings.Join(where, ", "), tries(r, tried, got)), node})
		}
	}
	return fs
}

// servedVerb says what serving the resource means.
func servedVerb(r resource) string {
	if r.consumer == "" {
		return "accepted publishes"
	}
	return "delivered messages"
}

// otherServed names the first resource other than r and r's consumers
// that was served (of r's kind, stream or consumer, if one was), and the
// servers that served it; "" when none was.
func otherServed(r resource, rs []resource, servers []string, got map[string]map[string]probe) (string, []string) {
	for _, sameKind := range []bool{true, false} {
		for _, o := range rs {
			kindsDiffer := (o.consumer == "") != (r.consumer == "")
			if o == r || (r.consumer == "" && o.stream == r.stream) || kindsDiffer == sameKind {
				continue
			}
			var where []string
			for _, srv := range servers {
				if served(o, srv, got) {
					where = append(where, srv)
				}
			}
			if len(where) > 0 {
				return o.String(), where
			}
		}
	}
	return "", nil
}

// served says whether the resource was served through the server: a
// consumer counts only where its stream accepted a publish (a consumer
// may deliver its backlog from a stream that accepts nothing).
func served(r resource, srv string, got map[string]map[string]probe) bool {
	if r.consumer != "" && !got[srv][resource{stream: r.stream}.String()].ok {
		return false
	}
	return got[srv][r.String()].ok
}

// tries describes the tries of r through the servers: each server's
// number of tries and last error.
func tries(r resource, servers []string, got map[string]map[string]probe) string {
	parts := make([]string, 0, len(servers))
	for _, srv := range servers {
		p := got[srv][r.String()]
		switch {
		case p.tries == 0:
			parts = append(parts, srv+": not tried")
		case p.err == "":
			parts = append(parts, fmt.Sprintf("%s: %d tries", srv, p.tries))
		default:
			parts = append(parts, fmt.Sprintf("%s: %d tries, last: %s", srv, p.tries, p.err))
		}
	}
	return strings.Join(parts, "; ")
}

// replicaState is one server's own view of one stream's replica, from its
// monitoring endpoint.
type replicaState struct {
	Messages uint64
	FirstSeq uint64
	LastSeq  uint64
}

// digest is a server's replicas of the given streams as one line for the
// replicas checker: equal on two servers iff they hold the same sequences
// and message counts of every stream. A stream the server does not hold is
// "missing".
func digest(streams []string, states map[string]replicaState) string {
	parts := make([]string, 0, len(streams))
	for _, st := range streams {
		s, ok := states[st]
		if !ok {
			parts = append(parts, st+" missing")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s first=%d last=%d msgs=%d", st, s.FirstSeq, s.LastSeq, s.Messages))
	}
	return strings.Join(parts, "; ")
}

// converged says whether every server that answered (a nil map did not)
// holds every stream in the same state.
func converged(streams []string, byServer []map[string]replicaState) bool {
	want := ""
	for _, states := range byServer {
		if states == nil {
			continue
		}
		d := digest(streams, states)
		if strings.Contains(d, "missing") || (want != "" && d != want) {
			return false
		}
		want = d
	}
	return true
}

// sample lists up to five items, sorted.
func sample(items []string) string {
	sort.Strings(items)
	if len(items) > 5 {
		return strings.Join(items[:5], "; ") + "; …"
	}
	return strings.Join(items, "; ")
}

// allCurrent says why a Raft group of the given size, as its leader
// describes it, is not settled: no leader, a replica missing, offline or
// not current; nil when it is.
func allCurrent(ci *jetstream.ClusterInfo, size int) error {
	switch {
	case ci == nil:
		return errors.New("no cluster information")
	case ci.Leader == "":
		return errors.New("no leader")
	case len(ci.Replicas) < size-1:
		return fmt.Errorf("%d of %d followers known", len(ci.Replicas), size-1)
	}
	for _, r := range ci.Replicas {
		if r == nil || r.Offline || !r.Current {
			name := "?"
			if r != nil {
				name = r.Name
			}
			return fmt.Errorf("replica %s not current", name)
		}
	}
	return nil
}
