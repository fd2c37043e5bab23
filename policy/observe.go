package policy

import (
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// Observation is one observed peer message, as an Observer sees it.
type Observation struct {
	Trial int
	Point *catalog.ObservePoint
	record.Observation
}

// Partition is what an Observer asks for after an observation: cut a
// node off from its peers, or heal one. The zero value asks for nothing.
type Partition struct {
	// Start names the node to cut off, for at most For.
	Start string
	For   time.Duration
	// Heal names the node whose partition ends now.
	Heal string
	// Why says what triggered the start, e.g. the violated invariant;
	// the injection record keeps it.
	Why string
}

// Observer is implemented by policies that start and stop partitions at
// protocol moments seen at observation points (cofi). Their plans ask for
// observations (Plan.Observe); every observation of an armed trial is
// given to Observe, serialised with the other policy calls.
type Observer interface {
	Observe(o *Observation) Partition
}
