package record

// LogBaseline is the set of warning-or-worse log templates seen in a
// campaign's fault-free trials (check.Learn adds a trial's): the log
// checker does not report a template the baseline knows. Its JSON form is
// what the store persists and what a coordinator sends its workers.
type LogBaseline struct {
	// Trials counts the trials learned.
	Trials int `json:"trials"`
	// Templates counts, per template, the trials it appeared in.
	Templates map[string]int `json:"templates"`
}

// Clone returns a deep copy, for judging a trial while other goroutines
// go on learning into b.
func (b *LogBaseline) Clone() *LogBaseline {
	c := &LogBaseline{Trials: b.Trials, Templates: make(map[string]int, len(b.Templates))}
	for k, v := range b.Templates {
		c.Templates[k] = v
	}
	return c
}

// Known reports whether template was seen in the baseline.
func (b *LogBaseline) Known(template string) bool { return b != nil && b.Templates[template] > 0 }
