package check

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Classes of broken guarantees, most damaging first. When one fault breaks
// several guarantees in a trial, the checkers that fail are not
// independent: a write the cluster acknowledged and then lost also makes
// revisions go backwards, watches miss or mismatch events, a history
// unlinearizable and clients stall while members catch up. The trial's
// primary symptom is the failing verdict of the lowest class (Rank); the
// rest co-occur. The order is what a user must fix first and what explains
// the rest:
//
//   - ClassLost: acknowledged data lost or members diverged. Nothing else
//     a trial shows is worse, and a loss explains every later anomaly
//     (an event never delivered, a revision re-used).
//   - ClassWrong: data wrong but not lost (an event that differs from its
//     write, a write applied twice, a key that outlived its lease).
//   - ClassOrder: ordering and consistency broken (an unlinearizable
//     history, a revision that went backwards, events out of order): a
//     lost or wrong write usually shows here too, so it ranks after them.
//   - ClassCrash: a node panicked or exited on its own. A crash explains
//     the progress symptoms that follow it, and is explained by none.
//   - ClassProgress: the cluster did not make progress or did not recover
//     (recovery, hang, slow, gray, a stream that stalled): what every fault
//     causes for a while, so the least specific of the guarantees.
//   - ClassLog: a new warning-or-worse log line; the weakest signal, and
//     always secondary when something else failed.
const (
	ClassLost = iota
	ClassWrong
	ClassOrder
	ClassCrash
	ClassProgress
	ClassLog
)

// checkerClass is each built-in checker's class, and its place within it
// (earlier is more primary). The violations checker's class is its primary
// guarantee's (GuaranteeClass). A checker not listed ranks after the
// crash class and before progress: a new oracle is more specific than a
// stall.
var checkerClass = map[string][2]int{
	NameReplicas:        {ClassLost, 1},
	NameLinearizability: {ClassOrder, 0},
	NameCrash:           {ClassCrash, 0},
	NameRecovery:        {ClassProgress, 0},
	// slow before hang: both fail on one member's fault stalling the
	// others' clients, and slow says which member and why.
	NameSlow: {ClassProgress, 1},
	NameHang: {ClassProgress, 2},
	NameGray: {ClassProgress, 4},
	NameLog:  {ClassLog, 0},
}

// guaranteeClass is the class of each guarantee name the bundled
// workloads report as violations (etcd, NATS, raft, Consul, minikv). Lost
// events and writes first, then wrong data, then order, then progress.
var guaranteeClass = map[string]int{
	// lost: acknowledged data that is gone
	"watch-lost-event": ClassLost, "write-lost": ClassLost, "message-lost": ClassLost,
	"lease-keepalive": ClassLost, // a key on a kept-alive lease vanished
	// wrong: data that is there but not as written
	"watch-mismatch": ClassWrong, "write-applied-twice": ClassWrong, "entry-reapplied": ClassWrong,
	"message-duplicated": ClassWrong, "watch-duplicate": ClassWrong,
	"lease-revoke": ClassWrong, // a key on a revoked lease was still there
	// order: what clients saw happened in an impossible order
	"revision-monotonic": ClassOrder, "watch-order": ClassOrder, "watch-atomic": ClassOrder,
	"watch-progress": ClassOrder, // an event below a revision promised complete
	// progress: a resource that serves through no member while others
	// serve ranks before one that serves through some
	"stream-unavailable": ClassProgress, "consumer-unavailable": ClassProgress,
	"stream-stalled": ClassProgress, "consumer-stalled": ClassProgress, "recovery": ClassProgress,
}

// GuaranteeClass is the class of a guarantee a workload reported violated;
// a name no bundled workload reports ranks with ClassOrder (a broken
// guarantee, but not known to be a loss).
func GuaranteeClass(name string) int {
	if c, ok := guaranteeClass[name]; ok {
		return c
	}
	return ClassOrder
}

// RankGuarantees orders guarantee names by class, then by name, most
// primary first, without duplicates.
func RankGuarantees(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ci, cj := GuaranteeClass(out[i]), GuaranteeClass(out[j]); ci != cj {
			return ci < cj
		}
		return out[i] < out[j]
	})
	return out
}

// ViolationSymptom is the violations checker's symptom for one violated
// guarantee; known-bug files match it ("workload saw watch-lost-event
// violated").
func ViolationSymptom(name string) string { return "workload saw " + name + " violated" }

// Guarantees are the guarantee names of a violations symptom:
// "workload saw X violated" names X; the set form earlier gofault wrote
// ("workload saw [X Y] violated") names X and Y. nil for another symptom.
func Guarantees(symptom string) []string {
	s, ok := strings.CutPrefix(symptom, "workload saw ")
	if !ok {
		return nil
	}
	if s, ok = strings.CutSuffix(s, " violated"); !ok {
		return nil
	}
	if set, ok := strings.CutPrefix(s, "["); ok {
		return strings.Fields(strings.TrimSuffix(set, "]"))
	}
	return []string{s}
}

// Rank orders a failing verdict's (checker, symptom) among a trial's
// failures: lower is more primary. It is the class (see ClassLost) times
// 100 plus the checker's place within it; the violations checker takes
// the class of its symptom's first guarantee, and ranks ahead of other
// checkers of that class, since a guarantee the workload names is the most
// specific evidence there is.
func Rank(checker, symptom string) int {
	if checker == NameViolations {
		if gs := Guarantees(symptom); len(gs) > 0 {
			return 100 * GuaranteeClass(RankGuarantees(gs)[0])
		}
		return 100 * ClassOrder
	}
	if c, ok := checkerClass[checker]; ok {
		return 100*c[0] + 10 + c[1]
	}
	return 100*ClassCrash + 50
}

// Class is the class (ClassLost ... ClassLog) of a failing verdict's
// (checker, symptom), as Rank places it.
func Class(checker, symptom string) int { return Rank(checker, symptom) / 100 }

// ClassName names a class for docs and reports.
func ClassName(class int) string {
	switch class {
	case ClassLost:
		return "lost"
	case ClassWrong:
		return "wrong"
	case ClassOrder:
		return "order"
	case ClassCrash:
		return "crash"
	case ClassProgress:
		return "progress"
	case ClassLog:
		return "log"
	}
	return fmt.Sprintf("class %d", class)
}

// nodeName matches node and client names ("n2", "n2/0") in symptoms.
var nodeName = regexp.MustCompile(`\bn\d+(/\d+)?\b`)

// SymptomKey is a verdict's symptom with its node and client names
// replaced by "n*", so that the same failure on different nodes has one
// key: the findings of a report are clustered by it, and a replay's
// recurrence (Recurrence) is said with it.
func SymptomKey(s string) string { return nodeName.ReplaceAllString(s, "n*") }
