package store

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gofault/gofault/record"
)

// TestOpenCampaign: a new campaign is made with the run's build key and
// reads back nothing stored; a resume finds it and reads back all it
// stored in one call; a run of another build mixes the key; a campaign
// its Check refuses is left as it was; a resume with nothing to find is
// ErrNotFound.
func TestOpenCampaign(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := Campaign{Name: "x", ConfigHash: "h", Policy: "random", Seed: 3, Config: "{}"}
	if _, err := s.OpenCampaign(ctx, Opening{Resume: true, New: c, BuildKey: "k1"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("resume of none: %v, want ErrNotFound", err)
	}
	fresh, err := s.OpenCampaign(ctx, Opening{New: c, BuildKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	id := fresh.Campaign.ID
	if fresh.BuildKey != "k1" || fresh.Campaign.Status != StatusRunning || fresh.Policy != nil || fresh.TestPass != nil ||
		fresh.Coverage != nil || len(fresh.Trials) != 0 || len(fresh.Reruns) != 0 || fresh.Baseline.Trials != 0 {
		t.Errorf("new campaign: %+v, want build key k1, running, nothing stored", fresh)
	}

	baseline := &record.LogBaseline{Trials: 2, Templates: map[string]int{"raft: lost leader": 1}}
	reruns := map[string]record.Rerun{"1-3": {Runs: 2, Recurred: 1}}
	cov := record.NewCoverage("cat", 10)
	tr := &record.Trial{ID: record.TrialID(id, 1), Campaign: "x", Index: 1, Policy: "random", Status: record.StatusOK}
	for _, err := range []error{
		s.PutPolicyState(ctx, id, []byte("snap")), s.PutBaseline(ctx, id, baseline), s.PutReruns(ctx, id, reruns),
		s.PutCoverage(ctx, id, cov), s.PutTestPass(ctx, id, []byte("[]")), s.SaveTrial(ctx, id, tr),
		s.SetCampaignStatus(ctx, id, StatusInterrupted),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	refuse := errors.New("refused")
	if _, err := s.OpenCampaign(ctx, Opening{ID: id, BuildKey: "k2", Check: func(*CampaignState) error { return refuse }}); !errors.Is(err, refuse) {
		t.Fatalf("refused: %v", err)
	}
	if c, err := s.Campaign(ctx, id); err != nil || c.Status != StatusInterrupted {
		t.Errorf("a refused campaign is %v (%v), want left interrupted", c.Status, err)
	}
	if key, err := s.BuildKey(ctx, id); err != nil || key != "k1" {
		t.Errorf("a refused campaign's build key %q (%v), want k1", key, err)
	}

	saved, err := s.OpenCampaign(ctx, Opening{Resume: true, New: c, BuildKey: "k2"})
	if err != nil {
		t.Fatal(err)
	}
	if saved.Campaign.ID != id || saved.Campaign.Status != StatusRunning || saved.BuildKey != MixedBuilds {
		t.Errorf("resumed: campaign %d %s, build key %q; want %d running, %q", saved.Campaign.ID, saved.Campaign.Status, saved.BuildKey, id, MixedBuilds)
	}
	if c, err := s.Campaign(ctx, id); err != nil || c.Status != StatusRunning {
		t.Errorf("resumed campaign stored as %v (%v), want running", c.Status, err)
	}
	if string(saved.Policy) != "snap" || string(saved.TestPass) != "[]" || !reflect.DeepEqual(saved.Baseline, baseline) ||
		!reflect.DeepEqual(saved.Reruns, reruns) || saved.Coverage == nil || saved.Coverage.Blocks != 10 ||
		len(saved.Trials) != 1 || saved.Trials[0].ID != tr.ID {
		t.Errorf("resumed: read back %+v", saved)
	}
}
