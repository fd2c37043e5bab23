package report

import (
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// SameWithoutFaults says that a finding's trials failed their workload's
// setup the way trials without any fault did: the same reason, numbers,
// names and addresses aside (check.Template). What the system refused
// then, it refuses without a fault too, so the fault did not cause that
// refusal: it is the setup's own noise, or a bug found without faults
// (the fault-free failures list it). The finding stays a finding — the
// fault may still have added to it — and its reader sees the line.
type SameWithoutFaults struct {
	// Trials are the finding's trials whose setup failed so.
	Trials []string `json:"trials"`
	// FaultFree are the trials without a fault whose setup failed the
	// same way.
	FaultFree []string `json:"fault_free"`
	// Reason is the first such fault-free trial's reason.
	Reason string `json:"reason"`
}

// markWithoutFaults sets WithoutFaults on each of findings whose trials'
// workload could not set up its checks for a reason that a trial of
// faultFree also gave.
func markWithoutFaults(findings []Finding, faulty, faultFree []*record.Trial) {
	type seen struct {
		trials []string
		reason string
	}
	free := map[string]*seen{}
	for _, t := range faultFree {
		reason, ok := check.NotJudgedReason(t.Client)
		if !ok {
			continue
		}
		k := check.Template(reason)
		if free[k] == nil {
			free[k] = &seen{reason: reason}
		}
		free[k].trials = append(free[k].trials, t.ID)
	}
	if len(free) == 0 {
		return
	}
	setup := map[string]*seen{} // faulty trial ID → the fault-free trials that failed alike
	for _, t := range faulty {
		if reason, ok := check.NotJudgedReason(t.Client); ok {
			if s := free[check.Template(reason)]; s != nil {
				setup[t.ID] = s
			}
		}
	}
	for i, f := range findings {
		for _, id := range f.Trials {
			s := setup[id]
			if s == nil {
				continue
			}
			w := findings[i].WithoutFaults
			if w == nil {
				w = &SameWithoutFaults{FaultFree: s.trials, Reason: s.reason}
				findings[i].WithoutFaults = w
			}
			w.Trials = append(w.Trials, id)
		}
	}
}
