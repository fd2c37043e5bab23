package campaign

import (
	"fmt"
	"io"
	"strings"

	"github.com/gofault/gofault/report"
)

// WriteText writes r for people: per campaign what its checkers were
// given, each changed trial with its old and new judgement, then the
// tallies, the trials not re-judged and the findings that went and
// appeared.
func (r *Rejudged) WriteText(w io.Writer) {
	for _, c := range r.Campaigns {
		fmt.Fprintf(w, "campaign %d re-judged with this gofault's checkers:\n", c.ID)
		for _, in := range c.Inputs {
			fmt.Fprintf(w, "  %s\n", in)
		}
	}
	for _, c := range r.Changed {
		fmt.Fprintf(w, "%s: %s → %s\n", c.Trial, judgementLine(c.Old), judgementLine(c.New))
	}
	fmt.Fprintf(w, "re-judged %s: %d unchanged, %d changed (%d failed→ok, %d ok→failed, %d other); %s\n",
		report.Plural(r.Trials, "trial"), r.Unchanged, len(r.Changed), r.FailedToOK, r.OKToFailed, r.Other,
		report.Plural(len(r.NotRejudged), "trial not re-judged", "trials not re-judged"))
	for _, n := range r.NotRejudged {
		fmt.Fprintf(w, "  not re-judged %s: %s\n", n.Trial, n.Why)
	}
	writeFindingChanges(w, "findings gone", r.Gone)
	writeFindingChanges(w, "findings new", r.Appeared)
}

// judgementLine is j in one line: "failed (hang: …; gray: …)".
func judgementLine(j Judgement) string {
	if len(j.Failing) == 0 {
		return string(j.Status)
	}
	return fmt.Sprintf("%s (%s)", j.Status, strings.Join(j.Failing, "; "))
}

// writeFindingChanges writes the findings fs under title, "none" when
// there are none.
func writeFindingChanges(w io.Writer, title string, fs []FindingChange) {
	if len(fs) == 0 {
		fmt.Fprintf(w, "%s: none\n", title)
		return
	}
	fmt.Fprintf(w, "%s: %d\n", title, len(fs))
	for _, f := range fs {
		kind := ""
		if f.FaultFree {
			kind = " (fault-free failure)"
		}
		fmt.Fprintf(w, "  %s%s campaign %d [%s] %s (trials %s)\n", f.ID, kind, f.Campaign, f.Checker, f.Symptom, strings.Join(f.Trials, ", "))
	}
}
