package record

import "fmt"

// AllMembers is the A of an invariant that B is equal on all members.
const AllMembers = "members"

// Invariant is one invariant CoFI mined (package invariant): at Point,
// after a message of type Type was handled, A equals B (or, when A is
// AllMembers, B is equal on all members).
type Invariant struct {
	// ID is "point|type|A==B", stable across rebuilds of the same source.
	ID    string `json:"id"`
	Point string `json:"point"` // the observation point's ID
	Type  int64  `json:"type"`  // the message type
	A     string `json:"a"`     // the sender's value the message carries, e.g. "msg.Term"
	B     string `json:"b"`     // the receiver's state variable, e.g. "node.Term"
	// Count is how often it held in the fault-free trials, Trials in how
	// many of them it was observed.
	Count  int `json:"count"`
	Trials int `json:"trials"`
}

// String is "A == B after type T at point".
func (v Invariant) String() string {
	if v.A == AllMembers {
		return fmt.Sprintf("%s equal on all members after message type %d at %s", v.B, v.Type, v.Point)
	}
	return fmt.Sprintf("%s == %s after message type %d at %s", v.A, v.B, v.Type, v.Point)
}
