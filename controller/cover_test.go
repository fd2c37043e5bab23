package controller

import (
	"slices"
	"testing"

	"github.com/gofault/gofault/agent/wire"
)

func TestSessionCoverageUnion(t *testing.T) {
	cat := testCatalog()
	cat.Blocks = 200
	s := newSession(cat, TrialSpec{ID: "t1", Nodes: []string{"n1", "n2"}}, (&scripted{}).plan, (&scripted{}).Decide)
	s.attach(1, "n1", wire.RoleAgent, true)
	s.attach(2, "n2", wire.RoleAgent, true)
	s.attach(3, "n1", wire.RoleAgent, true) // n1 restarted after a crash
	cover := func(blocks ...uint32) wire.Event {
		return wire.Event{Kind: wire.EvCover, Data: wire.AppendBlocks(nil, blocks)}
	}
	for _, step := range []struct {
		peer   PeerID
		blocks []uint32
	}{
		{1, []uint32{0, 5, 64}},
		{2, []uint32{5, 6, 199}},
		{3, []uint32{0, 5, 130}}, // the restarted process reports again
	} {
		if effs := s.events(step.peer, []wire.Event{cover(step.blocks...)}); len(effs) != 0 {
			t.Fatalf("effects %+v", effs)
		}
	}
	// An index past the catalog's blocks is reported, not recorded.
	effs := s.events(2, []wire.Event{cover(7, 200)})
	if len(effs) != 1 || effs[0].Warn == "" {
		t.Errorf("out-of-range block: effects %+v, want a warning", effs)
	}
	res, _ := s.end()
	if want := []uint32{0, 5, 6, 7, 64, 130, 199}; !slices.Equal(res.Blocks, want) {
		t.Errorf("blocks %v, want %v", res.Blocks, want)
	}
	// Events after the end are not recorded.
	s.events(1, []wire.Event{cover(1)})
	if res, _ := s.end(); len(res.Blocks) != 7 {
		t.Errorf("blocks after end %v", res.Blocks)
	}
}
