package policy

// What fuzz says of a trial (Explain): a seed, or which queued sequence it
// mutated and how.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Explain implements Explainer: whether trial index runs a seed or a
// mutant, and for a mutant which queued sequence it came from and what
// was appended or moved.
func (f *fuzz) Explain(index int) Choice {
	t := f.trials.of(index)
	if t == nil {
		return Choice{}
	}
	return Choice{Technique: f.Name(), Why: t.why}
}

// UnmarshalJSON reads an entry of a saved queue; one saved before
// entries kept their trial has Trial -1.
func (e *fuzzEntry) UnmarshalJSON(data []byte) error {
	type plain fuzzEntry
	p := plain{Trial: -1}
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*e = fuzzEntry(p)
	return nil
}

// grewText says that pick was appended to e's sequence, e.g. "appends a
// crash of n2 at s#3 (request 2, in n1's recovery) to trial 37's sequence
// [delay 1s of n1] (score 3.4, 12 new blocks)".
func grewText(e *fuzzEntry, pick Point) string {
	where := fmt.Sprintf("request %d", pick.Occurrence)
	if n := len(e.Seq); n > 0 && e.Seq[n-1].Fault.Kind.Kills() {
		switch killed := e.Seq[n-1].Node; {
		case pick.Node == killed:
			where += ", in " + killed + "'s recovery"
		case pick.Down:
			where += ", while " + killed + " was down"
		}
	}
	return fmt.Sprintf("appends %s of %s at %s (%s) to %s", article(faultText(pick.Fault)), pick.Node, pick.Site, where, entryText(e))
}

// movedText says which fault of e's sequence seq moved, and where to.
func movedText(e *fuzzEntry, seq []Point) string {
	for k := range seq {
		if k >= len(e.Seq) || seq[k].Node == e.Seq[k].Node && seq[k].Site == e.Seq[k].Site && seq[k].Occurrence == e.Seq[k].Occurrence {
			continue
		}
		return fmt.Sprintf("moves the %s of %s (fault %d of %d) to %s at %s (request %d) in %s",
			faultText(e.Seq[k].Fault), e.Seq[k].Node, k+1, len(seq), seq[k].Node, seq[k].Site, seq[k].Occurrence, entryText(e))
	}
	return "runs again " + entryText(e)
}

// entryText names a queued sequence: its trial, its faults and its score.
func entryText(e *fuzzEntry) string {
	var faults []string
	for _, p := range e.Seq {
		faults = append(faults, faultText(p.Fault)+" of "+p.Node)
	}
	of := "a queued sequence"
	if e.Trial >= 0 {
		of = fmt.Sprintf("trial %d's sequence", e.Trial)
	}
	score := fmt.Sprintf("score %.1f", e.Score)
	if e.NewBlocks > 0 {
		score += fmt.Sprintf(", %d new blocks", e.NewBlocks)
	}
	return fmt.Sprintf("%s [%s] (%s)", of, strings.Join(faults, ", then "), score)
}

// article is s after "a" or "an".
func article(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// faultText is a fault in words: its kind and, for one that lasts, how
// long ("delay 1s", "crash").
func faultText(f Fault) string {
	if f.Delay > 0 {
		return f.Kind.String() + " " + f.Delay.String()
	}
	return f.Kind.String()
}
