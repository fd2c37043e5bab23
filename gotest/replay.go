package gotest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
	"github.com/gofault/gofault/workdir"
)

// stored is how a gofault test campaign's options are kept in the
// store's campaign config: under a key of their own, so that a campaign
// of gofault run is never taken for one.
type stored struct {
	GoTest *Options `json:"gofault_test"`
}

// optionsOf returns the options of the gofault test campaign whose
// stored config is conf; ok is false for any other campaign.
func optionsOf(conf string) (o *Options, ok bool) {
	var s stored
	if json.Unmarshal([]byte(conf), &s) != nil || s.GoTest == nil {
		return nil, false
	}
	return s.GoTest, true
}

// IsTrial reports whether trial id of st was run by gofault test.
func IsTrial(ctx context.Context, st *store.Store, id string) bool {
	cid, _, ok := record.ParseTrialID(id)
	if !ok {
		return false
	}
	c, err := st.Campaign(ctx, cid)
	if err != nil {
		return false
	}
	_, ok = optionsOf(c.Config)
	return ok
}

// ReplayResult is what a replay of a gofault test trial saw.
type ReplayResult struct {
	Trial string `json:"trial"`
	Test  string `json:"test"`
	// Outcomes are each run's Attempt.Outcome ("" passed).
	Outcomes []string `json:"outcomes"`
	// Recurred counts the runs that failed again.
	Recurred int `json:"recurred"`
	// Missing counts the original's injections the rebuilt catalog no
	// longer has (the source changed).
	Missing int `json:"missing"`
}

// Replay rebuilds the test binary of trial id's campaign and runs the
// trial's test runs times with the trial's injections (policy.Replay: the
// same site, fault and occurrence), writing a line per run to progress.
func Replay(ctx context.Context, st *store.Store, id string, runs int, progress io.Writer) (*ReplayResult, error) {
	tr, err := st.Trial(ctx, id)
	if err != nil {
		return nil, err
	}
	cid, _, _ := record.ParseTrialID(id)
	camp, err := st.Campaign(ctx, cid)
	if err != nil {
		return nil, err
	}
	o, ok := optionsOf(camp.Config)
	if !ok {
		return nil, fmt.Errorf("trial %s: not a gofault test trial", id)
	}
	test := testOf(tr)
	if test == "" {
		return nil, fmt.Errorf("trial %s: no test recorded", id)
	}
	o.Log, o.Progress = nil, progress
	o.defaults()
	release, err := workdir.Lock(o.WorkDir, "gofault replay "+id)
	if err != nil {
		return nil, err
	}
	defer release()
	c := &campaignRun{o: *o}
	if err := c.build(ctx); err != nil {
		return nil, err
	}
	pol := policy.NewReplay(c.cat, tr.Injections)
	ctl, err := c.listen(pol)
	if err != nil {
		return nil, err
	}
	c.faults = ctl
	defer c.close()
	m := Measure{Test: test, Slowest: tr.End.Sub(tr.Start)}
	bound := HangBound(m, o.Delay, o.HangFloor)
	res := &ReplayResult{Trial: id, Test: test, Missing: len(pol.Missing())}
	// A finding of a second run (again.go) replays as it was found: the
	// test twice in the process, and it recurs when the second run fails.
	again := len(tr.Verdicts) > 0 && strings.HasSuffix(tr.Verdicts[0].Symptom, AgainSuffix)
	// A leak (left.go) replays against the fault-free runs' baseline, in
	// a process that runs the test as the trial's did, and recurs when
	// the test passes and leaves a goroutine that baseline does not hold.
	var left Leftovers
	if len(tr.Verdicts) > 0 && leftFinding(tr.Verdicts[0].Symptom) {
		m, err := storedMeasure(ctx, st, cid, test)
		if err != nil {
			return nil, err
		}
		left, again = m.Leftovers(), twice(m, *o)
	}
	for k := range runs {
		rid := fmt.Sprintf("replay-%s-%d-%d", id, k+1, time.Now().UnixNano())
		r, rtr, _, err := c.attempt(ctx, ctl, rid, job{index: k + 1, test: test, bound: bound, again: again, left: left})
		if err != nil {
			return nil, err
		}
		out := r.Outcome(bound)
		if again && r.Again != nil {
			out = ""
			if o := r.Again.Outcome(bound); o != "" {
				out = o + AgainSuffix
			}
		}
		if left.Checked && out == "" && rtr != nil && leftFinding(rtr.Verdicts[0].Symptom) {
			out = strings.TrimPrefix(rtr.Verdicts[0].Symptom, test+" ")
		}
		res.Outcomes = append(res.Outcomes, out)
		if out != "" {
			res.Recurred++
		}
		fmt.Fprintf(progress, "replay %d of %d of %s (%s): %s\n", k+1, runs, id, test, orPassed(out))
	}
	return res, nil
}

func orPassed(out string) string {
	if out == "" {
		return "passed"
	}
	return out
}

// storedMeasure is the fault-free measure of test that campaign cid
// stored.
func storedMeasure(ctx context.Context, st *store.Store, cid int64, test string) (Measure, error) {
	data, err := st.TestPass(ctx, cid)
	if err != nil {
		return Measure{}, err
	}
	ms, err := decodeMeasures(cid, data)
	if err != nil {
		return Measure{}, err
	}
	for _, m := range ms {
		if m.Test == test {
			return m, nil
		}
	}
	return Measure{}, fmt.Errorf("campaign %d stored no fault-free measure of %s", cid, test)
}
