package record

import "time"

// Observation is one peer message seen at an observation point
// (catalog.ObservePoint): before it was sent, or after it was handled.
type Observation struct {
	Time  time.Time `json:"time"`
	Node  string    `json:"node"`
	Point uint32    `json:"point"` // catalog index
	// Type, From and To are the message's type and its sender's and
	// receiver's IDs, as the target numbers them.
	Type int64  `json:"type"`
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
	// Values are the point's variables (ObservePoint.Vars), in order.
	Values []int64 `json:"values"`
}
