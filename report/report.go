// Package report turns judged trials into findings: failing verdicts
// clustered by the fault that preceded them (kind, site and the call stack
// that reached it) and the symptom, so a user reads one finding per root
// cause, each with the trials that show it and a command that replays one.
package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/gofault/gofault/record"
)

// stackDepth is how many frames of the injection stack identify a finding.
const stackDepth = 8

// Fault is the fault behind a finding.
type Fault struct {
	Kind  string   `json:"kind"` // "error", "delay", "crash" or "none"
	Site  string   `json:"site,omitempty"`
	Node  string   `json:"node,omitempty"`
	Error string   `json:"error,omitempty"`
	Delay string   `json:"delay,omitempty"`
	State string   `json:"state,omitempty"`
	Stack []string `json:"stack,omitempty"` // "func file:line", innermost first
}

// Finding is one cluster of failing trials.
type Finding struct {
	ID      string   `json:"id"`
	Checker string   `json:"checker"`
	Symptom string   `json:"symptom"`
	Fault   Fault    `json:"fault"`
	Trials  []string `json:"trials"`
	// Nodes are the nodes involved in any of the trials: where the fault
	// struck and where the symptom showed.
	Nodes    []string `json:"nodes,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	// Dir is the first trial's directory, with node logs.
	Dir string `json:"dir,omitempty"`
	// Replay is the command that re-runs the first trial with its faults.
	Replay string `json:"replay"`
}

// similar is the stack similarity (Jaccard index of the functions on two
// injection stacks) at which two failures with the same checker, symptom and
// fault kind are one finding.
const similar = 0.5

// nodeName matches node and client names ("n2", "n2/0") in symptoms, so the
// same failure on different nodes is one finding.
var nodeName = regexp.MustCompile(`\bn\d+(/\d+)?\b`)

// Symptom normalises a verdict's symptom for clustering.
func Symptom(s string) string { return nodeName.ReplaceAllString(s, "n*") }

// Recurrence compares a replayed trial with the original: the original's
// failures ("checker: symptom") whose checker fails again in replayed, and
// those whose checker does not. A fault that races with timers can show a
// different mix of secondary symptoms from run to run (a gray failure seen
// from one side or the other) while its main failure recurs.
func Recurrence(orig, replayed *record.Trial) (recurred, missing []string) {
	again := map[string]bool{}
	for _, v := range replayed.Verdicts {
		if v.Failed {
			again[v.Checker] = true
		}
	}
	for _, v := range orig.Verdicts {
		if !v.Failed {
			continue
		}
		f := v.Checker + ": " + Symptom(v.Symptom)
		if again[v.Checker] {
			recurred = append(recurred, f)
		} else {
			missing = append(missing, f)
		}
	}
	return recurred, missing
}

// Cluster groups the failing verdicts of the trials in which a fault was
// injected into findings: failures with the same checker, normalised
// symptom and fault kind whose injection stacks are similar (see similar)
// form one finding. Findings are ordered by the number of trials that show
// them, then by ID. A trial without an injected fault never makes a
// finding of a fault: see FaultFree.
func Cluster(trials []*record.Trial) []Finding {
	return cluster(withFaults(trials, true))
}

// FaultFree groups the failing verdicts of the trials in which nothing was
// injected (baselines, and trials the policy left alone) as Cluster does.
// What fails without a fault is noise of the setup or a bug found without
// faults; either way it is not a consequence of a fault, and it is reported
// apart, as "fault-free failures".
func FaultFree(trials []*record.Trial) []Finding {
	return cluster(withFaults(trials, false))
}

// withFaults returns the trials with (injected) or without injections.
func withFaults(trials []*record.Trial, injected bool) []*record.Trial {
	var out []*record.Trial
	for _, t := range trials {
		if (len(t.Injections) > 0) == injected {
			out = append(out, t)
		}
	}
	return out
}

func cluster(trials []*record.Trial) []Finding {
	type cluster struct {
		f     *Finding
		funcs map[string]bool
		nodes map[string]bool
	}
	groups := map[string][]*cluster{}
	var all []*cluster
	ts := append([]*record.Trial(nil), trials...)
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].Index < ts[j].Index })
	for _, t := range ts {
		fault := faultOf(t)
		funcs := funcSet(fault.Stack)
		for _, v := range t.Verdicts {
			if !v.Failed {
				continue
			}
			sym := Symptom(v.Symptom)
			group := strings.Join([]string{v.Checker, sym, fault.Kind}, "\x00")
			var c *cluster
			for _, cand := range groups[group] {
				if jaccard(cand.funcs, funcs) >= similar || (len(funcs) == 0 && len(cand.funcs) == 0) {
					c = cand
					break
				}
			}
			if c == nil {
				key := group + "\x00" + fault.Site + "\x00" + stackKey(fault.Stack)
				sum := sha256.Sum256([]byte(key))
				c = &cluster{
					f: &Finding{
						ID:       hex.EncodeToString(sum[:])[:10],
						Checker:  v.Checker,
						Symptom:  sym,
						Fault:    fault,
						Evidence: v.Evidence,
						Dir:      t.Dir,
						Replay:   "gofault replay " + t.ID,
					},
					funcs: funcs,
					nodes: map[string]bool{},
				}
				groups[group] = append(groups[group], c)
				all = append(all, c)
			}
			if n := len(c.f.Trials); n == 0 || c.f.Trials[n-1] != t.ID {
				c.f.Trials = append(c.f.Trials, t.ID)
			}
			for _, n := range v.Nodes {
				c.nodes[n] = true
			}
			if fault.Node != "" {
				c.nodes[fault.Node] = true
			}
		}
	}
	out := make([]Finding, 0, len(all))
	for _, c := range all {
		for n := range c.nodes {
			c.f.Nodes = append(c.f.Nodes, n)
		}
		sort.Strings(c.f.Nodes)
		out = append(out, *c.f)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i].Trials) != len(out[j].Trials) {
			return len(out[i].Trials) > len(out[j].Trials)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// funcSet is the set of functions on a rendered stack.
func funcSet(stack []string) map[string]bool {
	m := make(map[string]bool, len(stack))
	for _, s := range stack {
		fn, _, _ := strings.Cut(s, " ")
		m[fn] = true
	}
	return m
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for k := range a {
		if b[k] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// faultOf describes the first fault of a trial (most trials have one).
func faultOf(t *record.Trial) Fault {
	if len(t.Injections) == 0 {
		return Fault{Kind: "none"}
	}
	inj := t.Injections[0]
	f := Fault{Kind: inj.Kind.String(), Site: inj.SiteID, Node: inj.Node, Error: inj.Error, State: inj.StateID}
	if inj.Delay > 0 {
		f.Delay = inj.Delay.String()
	}
	for i, fr := range inj.Stack {
		if i == stackDepth {
			break
		}
		f.Stack = append(f.Stack, fmt.Sprintf("%s %s:%d", fr.Func, fr.File, fr.Line))
	}
	return f
}

// stackKey keeps the function names of a rendered stack, so findings do
// not split on line numbers.
func stackKey(stack []string) string {
	var b strings.Builder
	for _, s := range stack {
		fn, _, _ := strings.Cut(s, " ")
		b.WriteString(fn)
		b.WriteByte('|')
	}
	return b.String()
}

// WriteFaultFree writes the fault-free failures for humans, after the
// findings; nothing when there are none.
func WriteFaultFree(w io.Writer, failures []Finding) error {
	if len(failures) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nfault-free failures: %d (no fault was injected in these trials: noise of the setup, or a bug found without faults)\n", len(failures))
	return WriteText(w, failures)
}

// WriteText writes findings for humans.
func WriteText(w io.Writer, findings []Finding) error {
	if len(findings) == 0 {
		_, err := fmt.Fprintln(w, "no findings")
		return err
	}
	for i, f := range findings {
		fmt.Fprintf(w, "finding %s  [%s] %s\n", f.ID, f.Checker, f.Symptom)
		switch f.Fault.Kind {
		case "none":
			fmt.Fprintf(w, "  fault    none (fails without injected faults)\n")
		default:
			detail := f.Fault.Error
			if f.Fault.Delay != "" {
				detail = f.Fault.Delay
			}
			fmt.Fprintf(w, "  fault    %s %s at %s on %s\n", f.Fault.Kind, detail, f.Fault.Site, f.Fault.Node)
			if f.Fault.State != "" {
				fmt.Fprintf(w, "  state    %s\n", f.Fault.State)
			}
			for _, s := range f.Fault.Stack {
				fmt.Fprintf(w, "           %s\n", s)
			}
		}
		for j, e := range f.Evidence {
			if j == 5 {
				fmt.Fprintf(w, "           ... %d more\n", len(f.Evidence)-5)
				break
			}
			fmt.Fprintf(w, "  evidence %s\n", e)
		}
		fmt.Fprintf(w, "  trials   %s\n", strings.Join(f.Trials, " "))
		if f.Dir != "" {
			fmt.Fprintf(w, "  logs     %s\n", f.Dir)
		}
		fmt.Fprintf(w, "  replay   %s\n", f.Replay)
		if i < len(findings)-1 {
			fmt.Fprintln(w)
		}
	}
	return nil
}

// WriteTrials writes one line per trial: its status, duration, faults and
// the checkers that failed it.
func WriteTrials(w io.Writer, trials []*record.Trial) error {
	for _, t := range trials {
		var faults []string
		for _, inj := range t.Injections {
			detail := inj.Error
			if inj.Delay > 0 {
				detail = inj.Delay.String()
			}
			faults = append(faults, fmt.Sprintf("%s %s at %s on %s", inj.Kind, detail, inj.SiteID, inj.Node))
		}
		if len(faults) == 0 {
			faults = []string{"no fault"}
		}
		var failed []string
		for _, v := range t.Verdicts {
			if v.Failed {
				failed = append(failed, v.Checker+": "+v.Symptom)
			}
		}
		fmt.Fprintf(w, "%-8s %-6s %5.1fs %-9s %s\n", t.ID, t.Status, t.End.Sub(t.Start).Seconds(), t.Policy, strings.Join(faults, "; "))
		for _, f := range failed {
			fmt.Fprintf(w, "%25s %s\n", "", f)
		}
		if t.Err != "" {
			fmt.Fprintf(w, "%25s (%s)\n", "", firstLine(t.Err))
		}
	}
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
