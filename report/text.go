package report

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// WriteFaultFree writes the fault-free failures for humans, after the
// findings, with what their re-runs showed (Finding.Reruns); nothing when
// there are none.
func WriteFaultFree(w io.Writer, failures []Finding) error {
	if len(failures) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nfault-free failures: %d (no fault was injected in these trials: noise of the setup, or a bug found without faults)\n", len(failures))
	for i, f := range failures {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := WriteText(w, failures[i:i+1]); err != nil {
			return err
		}
		var rs []string
		for _, t := range f.Trials {
			if r, ok := f.Reruns[t]; ok {
				rs = append(rs, fmt.Sprintf("%s recurred in %d of %d re-runs (%s)", t, r.Recurred, r.Runs, r.Kind()))
			}
		}
		if len(rs) > 0 {
			fmt.Fprintf(w, "  re-runs  %s\n", strings.Join(rs, "; "))
		}
	}
	return nil
}

// WriteGeneric writes the generic consequences of faults for humans,
// after the findings; nothing when there are none.
func WriteGeneric(w io.Writer, generic []Finding) error {
	if len(generic) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\ngeneric consequences of faults: %d (informational: new log lines that followed faults at many unrelated sites)\n", len(generic))
	for _, g := range generic {
		fmt.Fprintf(w, "  [%s] %s — after %d faults in %d trials (%s)\n", g.Checker, g.Symptom, len(g.Sites), len(g.Trials), faultLine(g.Sites[0].Fault))
	}
	return nil
}

// faultLine describes a fault in one line.
func faultLine(f Fault) string {
	if f.Kind == "none" {
		return "no fault"
	}
	detail := f.Error
	if k, err := catalog.ParseKind(f.Kind); err == nil && k.After() {
		detail = "" // the next disk call, which Shape says
	}
	if f.Delay != "" {
		detail = f.Delay
	}
	if d := partitionDetail(f); d != "" {
		detail = d
	}
	if detail != "" {
		detail += " "
	}
	if k, err := catalog.ParseKind(f.Kind); err == nil && f.Peer != "" {
		cut := record.Injection{Kind: k, Node: f.Node, Peer: f.Peer, Side: f.Side}.CutPeers(nil)
		return fmt.Sprintf("%s %sat %s of %s%s", f.Kind, detail, f.Site, record.NodeRole(f.Node, f.Role), cut)
	}
	k, _ := catalog.ParseKind(f.Kind)
	return fmt.Sprintf("%s %sat %s on %s%s", f.Kind, detail, f.Site, record.NodeRole(f.Node, f.Role), record.Shape(k, f.Site, record.ShapeDetail(k, f.Error)))
}

// WriteText writes findings for humans: per finding its symptom, the
// faults that led to it (the first with its state and stack), evidence,
// trials and the replay command.
func WriteText(w io.Writer, findings []Finding) error {
	if len(findings) == 0 {
		_, err := fmt.Fprintln(w, "no findings")
		return err
	}
	for i, f := range findings {
		fmt.Fprintf(w, "finding %s  [%s] %s\n", f.ID, f.Checker, f.Symptom)
		if f.Fault.Kind == "none" {
			fmt.Fprintf(w, "  fault    none (fails without injected faults)\n")
		} else {
			fmt.Fprintf(w, "  sites    %d (the faults that led to this symptom, most trials first; gofault replay %s/K replays the K-th)\n", len(f.Sites), f.ID)
			for j, s := range f.Sites {
				fmt.Fprintf(w, "  %-8s %s (%d trials; %s)\n", fmt.Sprintf("fault %d", j+1), faultLine(s.Fault), len(s.Trials), s.Replay)
				for _, t := range s.Fault.Then {
					fmt.Fprintf(w, "           then %s\n", t)
				}
				if j > 0 {
					continue
				}
				if s.Fault.State != "" {
					fmt.Fprintf(w, "  state    %s\n", s.Fault.State)
				}
				for _, fr := range s.Fault.Stack {
					fmt.Fprintf(w, "           %s\n", fr)
				}
			}
		}
		for _, co := range f.CoOccurring {
			fmt.Fprintf(w, "  also     [%s] %s (in %d of %d trials)\n", co.Checker, co.Symptom, len(co.Trials), len(f.Trials))
		}
		for j, e := range f.Evidence {
			if j == 5 {
				fmt.Fprintf(w, "           ... %d more\n", len(f.Evidence)-5)
				break
			}
			fmt.Fprintf(w, "  evidence %s\n", e)
		}
		for _, n := range f.Notes() {
			fmt.Fprintf(w, "  %-8s %s\n", n.Label, n.Text)
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

// logTail is how many lines of each node's log WriteTrials shows.
const logTail = 10

// WriteTrials writes one line per trial: its status, duration, faults and,
// beneath it, the technique its policy chose for it and why (when the
// policy explained itself, record.Trial.Choice), the checkers that
// failed it and those that passed it with a note (an informational
// verdict: a test assumption, a corruption the node detected, what a rule
// excused); with full, a trial's whole error and, for
// a trial that failed or could not run, the last lines of each node's log.
func WriteTrials(w io.Writer, trials []*record.Trial, full bool) error {
	for _, t := range trials {
		var faults []string
		for _, inj := range t.Injections {
			detail := inj.Error
			if inj.Kind.After() {
				detail = "" // the next disk call, which Shape says
			}
			if inj.Delay > 0 {
				detail = inj.Delay.String()
			}
			if inj.Kind.Cuts() {
				faults = append(faults, partitionLine(inj, t))
				continue
			}
			faults = append(faults, fmt.Sprintf("%s %s%s at %s on %s%s", inj.Kind, detail, inj.Held(), inj.SiteID, record.NodeRole(inj.Node, inj.Role), record.Shape(inj.Kind, inj.SiteID, record.ShapeDetail(inj.Kind, inj.Error))))
		}
		if len(faults) == 0 {
			faults = []string{"no fault"}
		}
		var failed []string
		for _, v := range t.Verdicts {
			if v.Failed || v.Informational() {
				failed = append(failed, v.Checker+": "+v.Symptom)
			}
		}
		cov := ""
		if t.Blocks > 0 {
			cov = fmt.Sprintf("  [%d blocks, +%d new]", t.Blocks, t.NewBlocks)
		}
		fmt.Fprintf(w, "%-8s %-10s %5.1fs %-9s %s%s\n", t.ID, t.Status, t.End.Sub(t.Start).Seconds(), t.Policy, strings.Join(faults, "; "), cov)
		if t.Choice != "" {
			fmt.Fprintf(w, "%29s chose %s: %s\n", "", t.Choice, t.Why)
		}
		for _, f := range failed {
			fmt.Fprintf(w, "%29s %s\n", "", f)
		}
		switch {
		case t.Err != "" && full:
			for _, l := range strings.Split(strings.TrimRight(t.Err, "\n"), "\n") {
				fmt.Fprintf(w, "%29s | %s\n", "", l)
			}
		case t.Err != "":
			fmt.Fprintf(w, "%29s (%s)\n", "", firstLine(t.Err))
		}
		if full && len(t.Roles) > 0 {
			var changes []string
			for _, c := range t.Roles {
				changes = append(changes, fmt.Sprintf("%s %s at %.1fs", c.Node, c.Role, c.Time.Sub(t.Start).Seconds()))
			}
			fmt.Fprintf(w, "%29s roles: %s\n", "", strings.Join(changes, ", "))
		}
		if full {
			for _, v := range t.Verdicts {
				writeVerdictDismissed(w, v)
			}
		}
		if full && t.Status != record.StatusOK {
			for _, n := range t.Nodes {
				lines, err := tail(n.Log, logTail)
				if err != nil {
					fmt.Fprintf(w, "%29s %s log: %v\n", "", n.Name, err)
					continue
				}
				fmt.Fprintf(w, "%29s %s log (last %d lines of %s):\n", "", n.Name, len(lines), n.Log)
				for _, l := range lines {
					fmt.Fprintf(w, "%29s | %s\n", "", l)
				}
			}
		}
	}
	return nil
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) ([]string, error) {
	if path == "" {
		return nil, fmt.Errorf("not recorded")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return lines[max(0, len(lines)-n):], nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Plural says "1 finding" or "3 findings"; a second form is the plural
// where adding "s" is wrong ("trials that could not run").
func Plural(n int, one string, many ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}
