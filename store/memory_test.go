package store

import (
	"context"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func TestPastInjectionsAndForget(t *testing.T) {
	ctx := context.Background()
	// A store from before the memory (version 16) takes the migration.
	s := openAtVersion(t, 16)
	var ids []int64
	for range 3 {
		id, err := s.CreateCampaign(ctx, Campaign{Name: "etcd", ConfigHash: "h", Policy: "random"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	save := func(campaign int64, idx int, status record.Status, inj ...record.Injection) {
		t.Helper()
		if err := s.SaveTrial(ctx, campaign, &record.Trial{Index: idx, Status: status, Injections: inj}); err != nil {
			t.Fatal(err)
		}
	}
	held := record.Injection{SiteID: "raft.send#0", Kind: catalog.KindPartition, Delay: 2 * time.Second, Until: "leader", Cap: 15 * time.Second, Role: "StateLeader", Side: []string{"n2"}}
	save(ids[0], 1, record.StatusOK, record.Injection{SiteID: "wal.sync#0", Kind: catalog.KindError, Error: "EIO", Role: "StateFollower"})
	save(ids[0], 2, record.StatusFailed, held, record.Injection{SiteID: "wal.sync#0", Kind: catalog.KindCrash})
	save(ids[1], 1, record.StatusOK) // no injection
	save(ids[2], 1, record.StatusOK, record.Injection{SiteID: "other#0", Kind: catalog.KindCrash})

	got, err := s.PastInjections(ctx, ids[:2])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("past injections of campaigns %v: %+v; want 3", ids[:2], got)
	}
	if p := got[0]; p.Trial != record.TrialID(ids[0], 1) || p.Status != record.StatusOK || p.Injection.Error != "EIO" || p.Injection.Role != "StateFollower" {
		t.Errorf("first: %+v", p)
	}
	if p := got[1].Injection; got[1].Status != record.StatusFailed || p.Until != "leader" || p.Cap != 15*time.Second || p.Delay != 2*time.Second || len(p.Side) != 1 || p.Kind != catalog.KindPartition {
		t.Errorf("held partition: %+v", got[1])
	}
	if none, err := s.PastInjections(ctx, nil); err != nil || none != nil {
		t.Errorf("no campaigns: %v, %v", none, err)
	}

	if f, err := s.Forgotten(ctx, "etcd", "v3.7"); err != nil || f != 0 {
		t.Fatalf("Forgotten before any reset: %d, %v", f, err)
	}
	last, err := s.Forget(ctx, "etcd", "v3.7")
	if err != nil || last != ids[2] {
		t.Fatalf("Forget: %d, %v; want %d", last, err, ids[2])
	}
	for _, tt := range []struct {
		name, family string
		want         int64
	}{{"etcd", "v3.7", ids[2]}, {"etcd", "v3.6", 0}, {"nats", "v3.7", 0}} {
		if f, err := s.Forgotten(ctx, tt.name, tt.family); err != nil || f != tt.want {
			t.Errorf("Forgotten(%s, %s) = %d, %v; want %d", tt.name, tt.family, f, err, tt.want)
		}
	}
}
