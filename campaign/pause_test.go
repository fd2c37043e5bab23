package campaign

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofault/gofault/store"
)

// TestWaitWhilePaused checks that a paused campaign begins no trial until
// it is resumed (by another store handle, as gofault ui is), and that a
// stop ends the wait.
func TestWaitWhilePaused(t *testing.T) {
	defer func(d time.Duration) { pausePoll = d }(pausePoll)
	pausePoll = 10 * time.Millisecond
	db := filepath.Join(t.TempDir(), "gofault.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	id, err := st.CreateCampaign(ctx, store.Campaign{Name: "x", ConfigHash: "h", Policy: "random"})
	if err != nil {
		t.Fatal(err)
	}
	s := &campaignRun{st: st, camp: &store.Campaign{ID: id}, opts: Options{Logger: slog.New(slog.DiscardHandler)}}
	if err := s.waitWhilePaused(ctx); err != nil {
		t.Fatalf("not paused: %v", err)
	}
	ui, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()
	if err := ui.SetPaused(ctx, id, true); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.waitWhilePaused(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("a paused campaign went on: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := ui.SetPaused(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a resumed campaign did not go on")
	}
	ui.SetPaused(ctx, id, true)
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := s.waitWhilePaused(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a stopped wait returned %v", err)
	}
}
