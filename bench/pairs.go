package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Pair compares two policies of a bench over the (bug, seed) pairs both
// could run: policy A's campaign of a bug with seed k against policy B's
// of the same bug with the same seed. The seeds of a bug are independent
// draws of each policy, so each pair is one draw of A against one of B on
// that bug, and a bug counts as often as it has seeds.
//
// Trials-to-find is censored (a miss is "more than the cap", or never), so
// the test is the exact sign test, which needs only which of the two found
// the bug sooner: a miss is worse than any find, two misses or two finds
// at the same trial are a tie and left out. A pair where either policy
// could not find the bug (Outcome.Cannot) is no contest and left out too.
type Pair struct {
	// A and B are the policies, in the bench's order.
	A string `json:"a"`
	B string `json:"b"`
	// Pairs is the number of (bug, seed) pairs both could run, over Bugs
	// bugs; Cannot the pairs left out because one of them could not.
	Pairs  int `json:"pairs"`
	Bugs   int `json:"bugs"`
	Cannot int `json:"cannot"`
	// AWins counts the pairs where A found the bug in fewer fault trials
	// than B, of which AOnly where B missed it; BWins and BOnly the same
	// for B.
	AWins int `json:"a_wins"`
	AOnly int `json:"a_only"`
	BWins int `json:"b_wins"`
	BOnly int `json:"b_only"`
	// Ties counts the pairs left out of the test: both found at the same
	// fault trial, or both missed (BothMissed of them).
	Ties       int `json:"ties"`
	BothMissed int `json:"both_missed"`
	// MedianDiff is the median over the BothFound pairs in which both
	// found the bug of A's fault trials to it minus B's (negative: A
	// sooner); 0 when there are none. A pair with a miss has no
	// difference to give.
	MedianDiff float64 `json:"median_diff"`
	BothFound  int     `json:"both_found"`
	// P is the two-sided p-value of the sign test over the pairs that are
	// not ties: the chance of a split of wins at least this uneven were
	// the two policies as good as each other.
	P float64 `json:"p"`
	// Winner is A or B when P < 1 − Confidence; "" when the difference
	// is not more than noise.
	Winner string `json:"winner,omitempty"`
}

// Compare compares every two of policies (each with each after it) over
// the rows' bugs: the seeds of each bug that both policies' rows hold.
func Compare(rows []Row, policies []string) []Pair {
	type cell struct{ bug, policy string }
	outcomes := map[cell]map[int64]Outcome{}
	var bugs []string
	for _, r := range rows {
		c := cell{r.Bug, r.Policy}
		if outcomes[c] == nil {
			outcomes[c] = map[int64]Outcome{}
		}
		for _, o := range r.Outcomes {
			outcomes[c][o.Seed] = o
		}
		if len(bugs) == 0 || bugs[len(bugs)-1] != r.Bug {
			bugs = append(bugs, r.Bug)
		}
	}
	var out []Pair
	for i, a := range policies {
		for _, b := range policies[i+1:] {
			p := Pair{A: a, B: b}
			var diffs []float64
			for _, bug := range bugs {
				as, bs := outcomes[cell{bug, a}], outcomes[cell{bug, b}]
				counted := false
				for seed, oa := range as {
					ob, ok := bs[seed]
					if !ok {
						continue
					}
					if oa.Cannot || ob.Cannot {
						p.Cannot++
						continue
					}
					p.Pairs++
					counted = true
					switch {
					case oa.missed() && ob.missed():
						p.Ties++
						p.BothMissed++
					case ob.missed():
						p.AWins++
						p.AOnly++
					case oa.missed():
						p.BWins++
						p.BOnly++
					default:
						d := float64(oa.Trial - ob.Trial)
						diffs = append(diffs, d)
						switch {
						case d < 0:
							p.AWins++
						case d > 0:
							p.BWins++
						default:
							p.Ties++
						}
					}
				}
				if counted {
					p.Bugs++
				}
			}
			p.BothFound, p.MedianDiff = len(diffs), median(diffs)
			p.P = signTest(p.AWins, p.BWins)
			if p.P < 1-Confidence {
				p.Winner = a
				if p.BWins > p.AWins {
					p.Winner = b
				}
			}
			out = append(out, p)
		}
	}
	return out
}

// Verdict says who wins the comparison, or that it is not more than noise.
func (p *Pair) Verdict() string {
	switch {
	case p.Pairs == 0:
		return "no pair both could run"
	case p.Winner != "":
		return p.Winner + " wins"
	}
	return "not more than noise"
}

// writePairs prints the comparisons as a table with aligned columns.
func writePairs(w io.Writer, pairs []Pair) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "policies (A vs B)\tpairs (bugs)\tA sooner (B missed)\tB sooner (A missed)\tties (both missed)\tmedian A − B (both found)\tsign test p\tverdict")
	for _, p := range pairs {
		diff, pv := "-", "-"
		if p.BothFound > 0 {
			diff = fmt.Sprintf("%+.1f (%d)", p.MedianDiff, p.BothFound)
		}
		if p.Pairs > 0 {
			pv = fmt.Sprintf("%.3f", p.P)
		}
		pairs := fmt.Sprintf("%d (%d)", p.Pairs, p.Bugs)
		if p.Cannot > 0 {
			pairs += fmt.Sprintf(", %d cannot", p.Cannot)
		}
		fmt.Fprintf(tw, "%s vs %s\t%s\t%d (%d)\t%d (%d)\t%d (%d)\t%s\t%s\t%s\n", p.A, p.B, pairs,
			p.AWins, p.AOnly, p.BWins, p.BOnly, p.Ties, p.BothMissed, diff, pv, p.Verdict())
	}
	return tw.Flush()
}
