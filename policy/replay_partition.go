package policy

import (
	"cmp"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// replayObserved replays the partitions a trial started at observation
// points (cofi): each is started, after the previous one, when its node
// (or the node that observed, Injection.Observer) has made the recorded
// number of observations at the recorded point
// (Injection.Occurrence), and lasts the recorded length (its heal included).
type replayObserved struct {
	want   []record.Injection
	next   int
	counts map[observedKey]int
}

type observedKey struct {
	node  string
	point string
}

// add takes inj if it was started at an observation point of cat.
func (r *replayObserved) add(cat *catalog.Catalog, inj record.Injection) bool {
	if inj.Kind != catalog.KindPartition {
		return false
	}
	for i := range cat.ObservePoints {
		if cat.ObservePoints[i].ID == inj.SiteID {
			r.want = append(r.want, inj)
			return true
		}
	}
	return false
}

func (r *replayObserved) begin() {
	r.next = 0
	r.counts = map[observedKey]int{}
}

func (r *replayObserved) done() bool { return r.next >= len(r.want) }

// Observe implements Observer.
func (r *Replay) Observe(o *Observation) Partition {
	ro := &r.observed
	if ro.done() || o.Point == nil {
		return Partition{}
	}
	k := observedKey{o.Node, o.Point.ID}
	ro.counts[k]++
	w := ro.want[ro.next]
	if o.Node != cmp.Or(w.Observer, w.Node) || o.Point.ID != w.SiteID || ro.counts[k] < w.Occurrence {
		return Partition{}
	}
	ro.next++
	return Partition{Start: w.Node, For: w.Delay, Why: w.Error}
}
