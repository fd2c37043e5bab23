package main

import (
	"fmt"
	"slices"
	"sync"
)

// ledger is what the clients saw, for the checks after the load: every
// acknowledged publish per stream, every message consumers were delivered
// (stream → sequence → message ID) and each durable's deliveries and naks,
// stream A's acknowledged publishes and removals, and the acknowledged
// objects.
type ledger struct {
	mu        sync.Mutex
	acks      map[string][]pubAck
	seen      map[string]map[uint64]string
	conflicts map[string][]string
	consumers map[resource]*consumerLog
	apiMsgs   []apiMsg
	removals  []apiRemoval
	objects   map[string]objectPut
}

func newLedger() *ledger {
	return &ledger{
		acks:      map[string][]pubAck{},
		seen:      map[string]map[uint64]string{},
		consumers: map[resource]*consumerLog{},
		objects:   map[string]objectPut{},
	}
}

func (l *ledger) ack(stream string, a pubAck) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acks[stream] = append(l.acks[stream], a)
}

// consumer returns the durable's log; l.mu must be held.
func (l *ledger) consumer(stream, durable string) *consumerLog {
	r := resource{stream: stream, consumer: durable}
	cl := l.consumers[r]
	if cl == nil {
		cl = &consumerLog{delivered: map[uint64]int{}}
		l.consumers[r] = cl
	}
	return cl
}

// delivered records a message the durable consumer delivered; two
// different messages at one sequence are a conflict.
func (l *ledger) delivered(stream, durable string, seq uint64, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.consumer(stream, durable).delivered[seq]++
	m := l.seen[stream]
	if m == nil {
		m = map[uint64]string{}
		l.seen[stream] = m
	}
	if old, ok := m[seq]; ok && old != id {
		if l.conflicts == nil {
			l.conflicts = map[string][]string{}
		}
		l.conflicts[stream] = append(l.conflicts[stream], fmt.Sprintf("consumers got %s and %s at %d", old, id, seq))
		return
	}
	m[seq] = id
}

// nakked records a nak of a message the durable delivered (record the
// delivery first).
func (l *ledger) nakked(stream, durable string, seq uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cl := l.consumer(stream, durable)
	cl.naks = append(cl.naks, nak{seq: seq, before: cl.delivered[seq]})
}

// drained records whether the durable was drained after the load.
func (l *ledger) drained(stream, durable string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.consumer(stream, durable).drained = ok
}

// consumerLog returns a copy of the durable's log.
func (l *ledger) consumerLog(stream, durable string) consumerLog {
	l.mu.Lock()
	defer l.mu.Unlock()
	cl := *l.consumer(stream, durable)
	return cl
}

func (l *ledger) apiAck(m apiMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.apiMsgs = append(l.apiMsgs, m)
}

func (l *ledger) apiRemove(r apiRemoval) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.removals = append(l.removals, r)
}

// apiMaxSeq is the highest sequence of stream A acknowledged so far.
func (l *ledger) apiMaxSeq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var top uint64
	for _, m := range l.apiMsgs {
		top = max(top, m.seq)
	}
	return top
}

func (l *ledger) objectPut(name string, put objectPut) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.objects[name] = put
}

// objectNames are the acknowledged objects' names, sorted.
func (l *ledger) objectNames() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := make([]string, 0, len(l.objects))
	for n := range l.objects {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
