package store

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gofault/gofault/record"
)

// TestCampaignState reads back every kind of campaign state: what a new
// campaign reads (its zero value or ErrNotFound), what was stored, and that
// one campaign's state is not another's.
func TestCampaignState(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cid, err := s.CreateCampaign(ctx, Campaign{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.CreateCampaign(ctx, Campaign{Name: "y"})
	if err != nil {
		t.Fatal(err)
	}
	baseline := &record.LogBaseline{Trials: 2, Templates: map[string]int{"raft: lost leader": 1}}
	reruns := map[string]record.Rerun{"1-3": {Runs: 2, Recurred: 1}}
	invs := []record.Invariant{{ID: "p|1|a==b", Point: "p", Type: 1, A: "a", B: "b", Count: 3, Trials: 1}}
	kinds := []struct {
		name  string
		put   func(id int64) error
		get   func(id int64) (any, error)
		empty any   // what a campaign without it reads, when not an error
		want  any   // what is read back after put
		none  error // the error a campaign without it reads
	}{
		{"policy state", func(id int64) error { return s.PutPolicyState(ctx, id, []byte("snap")) },
			func(id int64) (any, error) { return s.PolicyState(ctx, id) }, nil, []byte("snap"), ErrNotFound},
		{"log baseline", func(id int64) error { return s.PutBaseline(ctx, id, baseline) },
			func(id int64) (any, error) { return s.Baseline(ctx, id) }, &record.LogBaseline{}, baseline, nil},
		{"build key", func(id int64) error { return s.PutBuildKey(ctx, id, "k1") },
			func(id int64) (any, error) { return s.BuildKey(ctx, id) }, nil, "k1", ErrNotFound},
		{"reruns", func(id int64) error { return s.PutReruns(ctx, id, reruns) },
			func(id int64) (any, error) { return s.Reruns(ctx, id) }, map[string]record.Rerun{}, reruns, nil},
		{"invariants", func(id int64) error { return s.PutInvariants(ctx, id, invs) },
			func(id int64) (any, error) { return s.Invariants(ctx, id) }, nil, invs, ErrNotFound},
		{"paused", func(id int64) error { return s.SetPaused(ctx, id, true) },
			func(id int64) (any, error) { return s.Paused(ctx, id) }, false, true, nil},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			got, err := k.get(cid)
			switch {
			case k.none != nil && !errors.Is(err, k.none):
				t.Errorf("before put: %v, %v; want %v", got, err, k.none)
			case k.none == nil && (err != nil || !reflect.DeepEqual(got, k.empty)):
				t.Errorf("before put: %#v, %v; want %#v", got, err, k.empty)
			}
			if err := k.put(cid); err != nil {
				t.Fatal(err)
			}
			if got, err := k.get(cid); err != nil || !reflect.DeepEqual(got, k.want) {
				t.Errorf("read back %#v, %v; want %#v", got, err, k.want)
			}
			got, err = k.get(other)
			if reflect.DeepEqual(got, k.want) {
				t.Errorf("campaign %d reads campaign %d's %s: %#v, %v", other, cid, k.name, got, err)
			}
		})
	}
}

// TestFindCalibration: the newest campaign's calibration under a key is
// found, another key's never, and none at all is ErrNotFound.
func TestFindCalibration(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.FindCalibration(ctx, "k1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty store: %v, want ErrNotFound", err)
	}
	var ids []int64
	for _, c := range []Calibration{
		{Key: "k1", Bound: 4 * time.Second, How: "first"},
		{Key: "k2", Bound: 9 * time.Second, How: "other scenario"},
		{Key: "k1", Bound: 5 * time.Second, How: "newer"},
		{}, // a campaign that measured nothing stores nothing
	} {
		id, err := s.CreateCampaign(ctx, Campaign{Name: "x"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if c.Key != "" {
			if err := s.PutCalibration(ctx, id, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		key      string
		want     Calibration
		campaign int64
	}{
		{"k1", Calibration{Key: "k1", Bound: 5 * time.Second, How: "newer"}, ids[2]},
		{"k2", Calibration{Key: "k2", Bound: 9 * time.Second, How: "other scenario"}, ids[1]},
		{"k3", Calibration{}, 0},
	} {
		c, from, err := s.FindCalibration(ctx, tc.key)
		if c != tc.want || from != tc.campaign || (tc.campaign == 0) != errors.Is(err, ErrNotFound) {
			t.Errorf("FindCalibration(%s) = %+v from %d, %v; want %+v from %d", tc.key, c, from, err, tc.want, tc.campaign)
		}
	}
}
