package report

import (
	"fmt"
	"io"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// NotJudgedWarning says, when most of a campaign's total trials could not
// be judged (record.StatusNotJudged: the workload could not set up what
// its checks need), that the campaign proves little; "" otherwise. The
// run summary, the campaign's log and the dashboard all show it, so a
// campaign of unjudged trials never reads as a clean one.
func NotJudgedWarning(notJudged, total int) string {
	if total == 0 || 2*notJudged <= total {
		return ""
	}
	return fmt.Sprintf("warning: %d of %d trials could not be judged (the workload could not set up its checks): this campaign proves little; see why with gofault report --trials", notJudged, total)
}

// Unjudged is a trial that ran but that its workload could not judge
// (record.StatusNotJudged): neither a finding nor a pass.
type Unjudged struct {
	Trial  string `json:"trial"`
	Reason string `json:"reason"`
	// Fault is the trial's first fault (Kind "none" for a trial without
	// one): the fault after which the system refused the workload's setup.
	Fault Fault `json:"fault"`
}

// unjudged lists the not-judged trials of trials, in order.
func unjudged(trials []*record.Trial) []Unjudged {
	var out []Unjudged
	for _, t := range trials {
		if t.Status != record.StatusNotJudged {
			continue
		}
		reason, ok := check.NotJudgedReason(t.Client)
		if !ok {
			reason = t.Err
		}
		out = append(out, Unjudged{Trial: t.ID, Reason: reason, Fault: faultOf(t)})
	}
	return out
}

// WriteNotJudged writes the trials that could not be judged, of total
// trials, after the findings, with the warning of NotJudgedWarning when
// they are most of them; nothing when there are none.
func WriteNotJudged(w io.Writer, nj []Unjudged, total int) error {
	if len(nj) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nnot judged: %d of %d trials (the workload could not set up its checks; neither ok nor failed)\n", len(nj), total)
	if warn := NotJudgedWarning(len(nj), total); warn != "" {
		fmt.Fprintf(w, "  %s\n", warn)
	}
	for i, u := range nj {
		if i == 10 {
			fmt.Fprintf(w, "  ... %d more (gofault report --not-judged lists them all)\n", len(nj)-10)
			break
		}
		fmt.Fprintf(w, "  %-8s %s — after %s\n", u.Trial, u.Reason, faultLine(u.Fault))
	}
	return nil
}
