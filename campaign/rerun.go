package campaign

import (
	"context"
	"fmt"
	"sync"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// reruns records what the re-runs of a campaign's fault-free failures
// showed, saved to the store after each.
type reruns struct {
	mu sync.Mutex
	m  map[string]record.Rerun
}

// wantsRerun reports whether tr is a fault-free failure that a re-run can
// judge (check.RerunChecked): the log checker's failures cannot be, so a
// trial that failed only on logs is not run again.
func wantsRerun(tr *record.Trial) bool {
	if tr.Status != record.StatusFailed || len(tr.Injections) > 0 {
		return false
	}
	for _, v := range tr.Verdicts {
		if check.RerunChecked(v) {
			return true
		}
	}
	return false
}

// rerunFaultFree runs a fault-free failure tr again without faults,
// checkers.rerun_fault_free times (under IDs of its own, "<trial>-rerun<k>",
// never saved as trials), saves how often some of its failures recurred and
// returns it; Runs is 0 when nothing was re-run.
func (s *campaignRun) rerunFaultFree(ctx context.Context, tr *record.Trial) (record.Rerun, error) {
	var res record.Rerun
	n := s.opts.Config.Checkers.RerunFaultFree
	if n <= 0 || !wantsRerun(tr) {
		return res, nil
	}
	for k := 1; k <= n && ctx.Err() == nil; k++ {
		again, err := s.r.rerun(ctx, tr, k)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return res, err
		}
		res.Runs++
		if check.Recurs(tr, again) {
			res.Recurred++
		}
	}
	if res.Runs == 0 {
		return res, nil
	}
	s.opts.Logger.Info("fault-free failure re-run", "trial", tr.ID, "runs", res.Runs, "recurred", res.Recurred, "kind", res.Kind())
	s.reruns.mu.Lock()
	defer s.reruns.mu.Unlock()
	s.reruns.m[tr.ID] = res
	return res, s.st.PutReruns(context.WithoutCancel(ctx), s.camp.ID, s.reruns.m)
}

// rerun runs the k-th fault-free re-run of orig and judges it; its data
// dirs are dropped at once, its logs kept.
func (r *runner) rerun(ctx context.Context, orig *record.Trial, k int) (*record.Trial, error) {
	t, err := r.beginID(fmt.Sprintf("%s-rerun%d", orig.ID, k), orig.Index, true)
	if err != nil {
		return nil, err
	}
	// A trial of policy none ended its load early (no fault could
	// strike): its re-runs do too, so they repeat what failed.
	t.shortLoad = orig.Policy == "none"

	tr, err := r.finish(ctx, t)
	if err != nil {
		return nil, err
	}
	return tr, r.keep.tidy(tr.Dir, false, nil)
}
