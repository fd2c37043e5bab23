package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/gofault/gofault/record"
)

// Output is where a mode of gofault report writes: W, as text, or with
// JSON as indented JSON; a mode's list is then one object holding Version
// (gofault's, under "version") and the list under the mode's key.
type Output struct {
	W       io.Writer
	JSON    bool
	Version any
}

// list writes list under key, with the version (--json).
func (o Output) list(key string, list any) error {
	return o.value(map[string]any{"version": o.Version, key: list})
}

// value writes v as indented JSON.
func (o Output) value(v any) error {
	enc := json.NewEncoder(o.W)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Trials is report --trials: every trial (fault, status, failed
// checkers); withErrors adds each one's whole error, role changes and log
// tails (text only).
func (o Output) Trials(trials []*record.Trial, withErrors bool) error {
	if o.JSON {
		return o.list("trials", trials)
	}
	return WriteTrials(o.W, trials, withErrors)
}

// Dismissed is report --dismissed: per log rule, what it dismissed across
// the trials.
func (o Output) Dismissed(trials []*record.Trial) error {
	rules := Dismissed(trials)
	if o.JSON {
		return o.value(rules)
	}
	return WriteDismissed(o.W, rules)
}

// Sites is report --sites: per fault site, the roles and states its
// requests arrived in.
func (o Output) Sites(trials []*record.Trial) error {
	sites := Reached(trials)
	if o.JSON {
		return o.list("sites", sites)
	}
	return WriteReached(o.W, sites)
}

// NotJudged is report --not-judged: the trials of rep the workload could
// not judge, with its reasons.
func (o Output) NotJudged(rep Report) error {
	if o.JSON {
		if rep.NotJudged == nil {
			rep.NotJudged = []Unjudged{}
		}
		return o.value(rep.NotJudged)
	}
	if len(rep.NotJudged) == 0 {
		_, err := fmt.Fprintf(o.W, "every one of %d trials was judged\n", rep.Trials)
		return err
	}
	return WriteNotJudged(o.W, rep.NotJudged, rep.Trials)
}

// FaultFree is report --fault-free: the failures of rep's trials in which
// no fault was injected.
func (o Output) FaultFree(rep Report) error {
	switch {
	case o.JSON:
		return o.list("fault_free", orEmpty(rep.FaultFree))
	case len(rep.FaultFree) == 0:
		return WriteText(o.W, nil)
	}
	return WriteFaultFree(o.W, rep.FaultFree)
}

// Generic is report --generic: the generic consequences of faults in rep.
func (o Output) Generic(rep Report) error {
	if o.JSON {
		return o.list("generic", orEmpty(rep.Generic))
	}
	return WriteGeneric(o.W, rep.Generic)
}

// Findings is gofault report's default: rep's findings (the list alone
// with JSON), then as text its generic consequences, the trials not
// judged and the fault-free failures. What one campaign adds (its dropped
// sites, its coverage) is the caller's to write after it.
func (o Output) Findings(rep Report) error {
	if o.JSON {
		return o.list("findings", orEmpty(rep.Findings))
	}
	if err := WriteText(o.W, rep.Findings); err != nil {
		return err
	}
	if err := WriteGeneric(o.W, rep.Generic); err != nil {
		return err
	}
	if err := WriteNotJudged(o.W, rep.NotJudged, rep.Trials); err != nil {
		return err
	}
	return WriteFaultFree(o.W, rep.FaultFree)
}

// orEmpty is fs, or an empty list for none (JSON [] rather than null).
func orEmpty(fs []Finding) []Finding {
	if fs == nil {
		return []Finding{}
	}
	return fs
}
