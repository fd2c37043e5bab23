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
	checkStalled   = "stream-stalled"
	checkRecovery  = "recovery"
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

// judgeRecovery judges the publishes after the load: ok[server][stream]
// says whether a publish to the stream through the server succeeded
// within the recovery bound. A server through which no stream accepted a
// publish did not recover; a stream that accepted publishes through some
// servers but not through another (one that recovered) is stalled there.
func judgeRecovery(servers, streams []string, ok map[string]map[string]bool) []finding {
	var fs []finding
	down := map[string]bool{}
	for _, srv := range servers {
		served := false
		for _, st := range streams {
			served = served || ok[srv][st]
		}
		if !served {
			down[srv] = true
			fs = append(fs, finding{checkRecovery, fmt.Sprintf("server %s accepted no publish to any stream after the load", srv), srv})
		}
	}
	for _, st := range streams {
		var good, bad []string
		for _, srv := range servers {
			switch {
			case ok[srv][st]:
				good = append(good, srv)
			case !down[srv]:
				bad = append(bad, srv)
			}
		}
		if len(good) > 0 && len(bad) > 0 {
			fs = append(fs, finding{checkStalled, fmt.Sprintf("stream %s accepted publishes through %s but not through %s after the load",
				st, strings.Join(good, ", "), strings.Join(bad, ", ")), bad[0]})
		}
	}
	return fs
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
