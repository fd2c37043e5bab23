package campaign

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

func TestCoverageUnionResumes(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cid, err := st.CreateCampaign(ctx, store.Campaign{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// loadCoverage is the coverage a resumed run starts from.
	loadCoverage := func(cat *catalog.Catalog) (*coverage, error) {
		saved, err := st.CampaignState(ctx, cid)
		if err != nil {
			return nil, err
		}
		return coverageFrom(saved.Coverage, cat, log), nil
	}
	cat := &catalog.Catalog{Blocks: 100, Hash: "h1"}
	cv, err := loadCoverage(cat)
	if err != nil {
		t.Fatal(err)
	}
	t1, t2 := &record.Trial{}, &record.Trial{}
	cv.add(t1, []uint32{1, 2, 3})
	cv.add(t2, []uint32{2, 3, 4, 5})
	if t1.Blocks != 3 || t1.NewBlocks != 3 || t2.Blocks != 4 || t2.NewBlocks != 2 {
		t.Errorf("trials' blocks %d/%d and %d/%d, want 3/3 and 4/2", t1.Blocks, t1.NewBlocks, t2.Blocks, t2.NewBlocks)
	}
	if err := cv.save(ctx, st, cid); err != nil {
		t.Fatal(err)
	}
	// A resumed run goes on from the stored union.
	again, err := loadCoverage(cat)
	if err != nil {
		t.Fatal(err)
	}
	t3 := &record.Trial{}
	again.add(t3, []uint32{5, 6})
	if covered, blocks := again.counts(); covered != 6 || blocks != 100 || t3.NewBlocks != 1 {
		t.Errorf("after resume: %d/%d covered, trial new %d; want 6/100, 1", covered, blocks, t3.NewBlocks)
	}
	// A build whose blocks are numbered otherwise starts afresh.
	other, err := loadCoverage(&catalog.Catalog{Blocks: 120, Hash: "h2"})
	if err != nil {
		t.Fatal(err)
	}
	if covered, blocks := other.counts(); covered != 0 || blocks != 120 {
		t.Errorf("other catalog: %d/%d, want 0/120", covered, blocks)
	}
	// Without counters nothing is kept, but a trial's own blocks are.
	none, err := loadCoverage(&catalog.Catalog{})
	if err != nil {
		t.Fatal(err)
	}
	t4 := &record.Trial{}
	none.add(t4, nil)
	if err := none.save(ctx, st, cid); err != nil {
		t.Fatal(err)
	}
	if c, b := none.counts(); c != 0 || b != 0 || t4.NewBlocks != 0 {
		t.Errorf("no counters: %d/%d", c, b)
	}
}

func TestRecentNew(t *testing.T) {
	var trials []*record.Trial
	trials = append(trials, &record.Trial{Policy: baselinePolicy, NewBlocks: 500})
	for i := 1; i <= 12; i++ {
		trials = append(trials, &record.Trial{Policy: "fuzz", NewBlocks: i})
	}
	if got, want := recentNew(trials), 3+4+5+6+7+8+9+10+11+12; got != want {
		t.Errorf("recentNew = %d, want %d", got, want)
	}
	if got := recentNew(trials[:3]); got != 1+2 {
		t.Errorf("recentNew of 2 fault trials = %d, want 3 (the baseline's blocks are not recent fault trials')", got)
	}
}
