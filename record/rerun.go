package record

// Rerun is how a fault-free failure fared when its trial was run again
// without faults: in how many of Runs re-runs some of its failures
// recurred (check.Recurs).
type Rerun struct {
	Runs     int `json:"runs"`
	Recurred int `json:"recurred"`
}

// Kind says what the re-runs make of the failure: "reproducible" (it
// recurred every time), "flaky" (sometimes) or "one-off" (never).
func (r Rerun) Kind() string {
	switch {
	case r.Recurred == 0:
		return "one-off"
	case r.Recurred == r.Runs:
		return "reproducible"
	}
	return "flaky"
}
