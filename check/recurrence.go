package check

import (
	"fmt"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

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
		f := v.Checker + ": " + SymptomKey(v.Symptom)
		if again[v.Checker] {
			recurred = append(recurred, f)
		} else {
			missing = append(missing, f)
		}
	}
	return recurred, missing
}

// NotInjected lists the original's injected faults that the replayed
// trial did not inject at the same site on the same node ("crash at SITE
// on n2, occurrence 195"), or, for a fault that struck the leader (role:
// the catalog's; record.Injection.OnLeader), on whichever member led. A
// replay injects at the recorded occurrence or the first matching request
// after it, so a replay whose workload ran slower may never get there,
// and then it says nothing about the bug.
func NotInjected(orig, replayed *record.Trial, role *catalog.Role) []string {
	type key struct {
		site, node string
		kind       catalog.Kind
	}
	// A fault on the leader strikes whichever member leads
	// (policy.Replay): its member is not part of what must match.
	node := func(inj record.Injection) string {
		if inj.OnLeader(role) {
			return "(the leader)"
		}
		return inj.Node
	}
	got := map[key]int{}
	for _, inj := range replayed.Injections {
		got[key{inj.SiteID, node(inj), inj.Kind}]++
	}
	var missing []string
	for _, inj := range orig.Injections {
		k := key{inj.SiteID, node(inj), inj.Kind}
		if got[k] > 0 {
			got[k]--
			continue
		}
		f := fmt.Sprintf("%s at %s on %s", inj.Kind, inj.SiteID, inj.Node)
		if inj.Occurrence > 0 {
			f += fmt.Sprintf(", occurrence %d", inj.Occurrence)
		}
		missing = append(missing, f)
	}
	return missing
}

// RerunChecked reports whether failure f of orig can be judged by a
// fault-free re-run: the log checker's cannot, since every fault-free
// trial teaches the log baseline what it logged.
func RerunChecked(v record.Verdict) bool { return v.Failed && v.Checker != NameLog }

// Recurs reports whether some failure of orig that a re-run can judge
// (RerunChecked) failed again in rerun.
func Recurs(orig, rerun *record.Trial) bool {
	again := map[string]bool{}
	for _, v := range rerun.Verdicts {
		if v.Failed {
			again[v.Checker] = true
		}
	}
	for _, v := range orig.Verdicts {
		if RerunChecked(v) && again[v.Checker] {
			return true
		}
	}
	return false
}
