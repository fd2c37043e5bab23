package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// RuleDismissals is what one rule of a checker dismissed across a
// campaign's trials, for a user who audits the rules.
type RuleDismissals struct {
	// Rule is the rule's name (record.Dismissal.Rule).
	Rule string `json:"rule"`
	// Scope says where the rule applies (check.LogRules), when known.
	Scope string `json:"scope,omitempty"`
	// Lines counts the dismissed lines, Trials the trials with one.
	Lines  int `json:"lines"`
	Trials int `json:"trials"`
	// Templates are the dismissed templates, the most trials first.
	Templates []DismissedTemplate `json:"templates"`
}

// DismissedTemplate is one template a rule dismissed.
type DismissedTemplate struct {
	Template string `json:"template"`
	// Count counts its dismissed lines.
	Count int `json:"count"`
	// Trials are the IDs of the trials it was dismissed in, in order.
	Trials []string `json:"trials"`
	// Nodes are the members that logged it.
	Nodes []string `json:"nodes"`
	// Example is one dismissed line as logged, Trial its trial and Why
	// what the rule tied it to there.
	Example string `json:"example"`
	Trial   string `json:"trial"`
	Why     string `json:"why,omitempty"`
}

// Dismissed sums up the lines the trials' verdicts dismissed
// (record.Verdict.Dismissed) by rule, with the rule's scope
// (check.LogRules), then by template; rules by name.
func Dismissed(trials []*record.Trial) []RuleDismissals {
	scopes := map[string]string{}
	for _, r := range check.LogRules {
		scopes[r.Name] = r.Scope
	}
	type tmplKey struct{ rule, template string }
	rules := map[string]*RuleDismissals{}
	ruleTrials := map[string]map[string]bool{}
	tmpls := map[tmplKey]*DismissedTemplate{}
	tmplNodes := map[tmplKey]map[string]bool{}
	for _, t := range trials {
		for _, v := range t.Verdicts {
			for _, d := range v.Dismissed {
				r := rules[d.Rule]
				if r == nil {
					r = &RuleDismissals{Rule: d.Rule, Scope: scopes[d.Rule]}
					rules[d.Rule] = r
					ruleTrials[d.Rule] = map[string]bool{}
				}
				r.Lines += d.Count
				ruleTrials[d.Rule][t.ID] = true
				k := tmplKey{d.Rule, d.Template}
				dt := tmpls[k]
				if dt == nil {
					dt = &DismissedTemplate{Template: d.Template, Example: d.Example, Trial: t.ID, Why: d.Why}
					tmpls[k] = dt
					tmplNodes[k] = map[string]bool{}
				}
				dt.Count += d.Count
				if n := len(dt.Trials); n == 0 || dt.Trials[n-1] != t.ID {
					dt.Trials = append(dt.Trials, t.ID)
				}
				tmplNodes[k][d.Node] = true
			}
		}
	}
	for k, dt := range tmpls {
		for n := range tmplNodes[k] {
			dt.Nodes = append(dt.Nodes, n)
		}
		sort.Strings(dt.Nodes)
		rules[k.rule].Templates = append(rules[k.rule].Templates, *dt)
	}
	out := make([]RuleDismissals, 0, len(rules))
	for name, r := range rules {
		r.Trials = len(ruleTrials[name])
		sort.Slice(r.Templates, func(i, j int) bool {
			a, b := r.Templates[i], r.Templates[j]
			if len(a.Trials) != len(b.Trials) {
				return len(a.Trials) > len(b.Trials)
			}
			return a.Template < b.Template
		})
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rule < out[j].Rule })
	return out
}

// WriteDismissed writes what each rule dismissed, as Dismissed sums it
// up: per rule its scope, then per template its counts, trials and an
// example line.
func WriteDismissed(w io.Writer, rules []RuleDismissals) error {
	if len(rules) == 0 {
		_, err := fmt.Fprintln(w, "no log lines dismissed")
		return err
	}
	for i, r := range rules {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %d lines in %d trials, %d templates\n", r.Rule, r.Lines, r.Trials, len(r.Templates))
		if r.Scope != "" {
			fmt.Fprintf(w, "  scope: %s\n", r.Scope)
		}
		for _, t := range r.Templates {
			fmt.Fprintf(w, "  %d× in %d trials on %s: %s\n", t.Count, len(t.Trials), strings.Join(t.Nodes, ","), t.Template)
			fmt.Fprintf(w, "      trials %s\n", abbreviate(t.Trials, 8))
			fmt.Fprintf(w, "      e.g. %s: %s\n", t.Trial, t.Example)
			if t.Why != "" {
				fmt.Fprintf(w, "      tied to %s\n", t.Why)
			}
		}
	}
	return nil
}

// abbreviate joins the first n of ids and says how many more there are.
func abbreviate(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, " ")
	}
	return fmt.Sprintf("%s … (+%d)", strings.Join(ids[:n], " "), len(ids)-n)
}

// writeVerdictDismissed writes the lines a verdict dismissed, one group a
// line, under a trial of WriteTrials.
func writeVerdictDismissed(w io.Writer, v record.Verdict) {
	for _, d := range v.Dismissed {
		fmt.Fprintf(w, "%25s %s dismissed %d× on %s by %s (%s): %s\n", "", v.Checker, d.Count, d.Node, d.Rule, d.Why, d.Example)
	}
}
