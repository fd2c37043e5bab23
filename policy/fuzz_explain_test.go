package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
)

// TestFuzzExplain: fuzz says whether a trial runs a seed and why, or which
// queued sequence it mutated (its trial, faults and score) and what it
// appended or moved; an entry of a queue saved before entries kept their
// trial is "a queued sequence".
func TestFuzzExplain(t *testing.T) {
	cat := testCatalog()
	site := cat.Sites[0].ID
	crash := Point{Node: "n1", Site: site, Occurrence: 1, Fault: Fault{Kind: catalog.KindCrash}}
	delay := Point{Node: "n2", Site: site, Occurrence: 4, Fault: Fault{Kind: catalog.KindDelay, Delay: time.Second}}
	entry := &fuzzEntry{Seq: []Point{crash}, Trial: 37, Score: 3.4, NewBlocks: 12}
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"grow in the killed node's recovery", grewText(entry, Point{Node: "n1", Site: site, Occurrence: 2, Fault: Fault{Kind: catalog.KindError}}),
			"appends an error of n1 at wal.save#Write.0 (request 2, in n1's recovery) to trial 37's sequence [crash of n1] (score 3.4, 12 new blocks)"},
		{"grow while the killed node was down", grewText(entry, Point{Node: "n3", Site: site, Occurrence: 5, Down: true, Fault: delay.Fault}),
			"appends a delay 1s of n3 at wal.save#Write.0 (request 5, while n1 was down) to trial 37's sequence [crash of n1] (score 3.4, 12 new blocks)"},
		{"grow an old entry", grewText(&fuzzEntry{Seq: []Point{delay}, Trial: -1, Score: 1}, crash),
			"appends a crash of n1 at wal.save#Write.0 (request 1) to a queued sequence [delay 1s of n2] (score 1.0)"},
		{"move", movedText(&fuzzEntry{Seq: []Point{crash, delay}, Trial: 5, Score: 2},
			[]Point{crash, {Node: "n3", Site: site, Occurrence: 7, Fault: delay.Fault}}),
			"moves the delay 1s of n2 (fault 2 of 2) to n3 at wal.save#Write.0 (request 7) in trial 5's sequence [crash of n1, then delay 1s of n2] (score 2.0)"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.got, tc.want)
		}
	}

	p := mustNew(t, "fuzz", Env{Catalog: cat, Seed: 1, MaxPerTrial: 3})
	f := p.(*fuzz)
	p.Begin(TrialInfo{Index: 0})
	if c := f.Explain(0); c.Technique != "fuzz" || !strings.Contains(c.Why, "a seed") || !strings.Contains(c.Why, "the first 4 trials seed the queue") {
		t.Errorf("Explain(0) = %+v, want a seed of the first trials", c)
	}
	p.End(Outcome{Index: 0})
	if c := f.Explain(0); c != (Choice{}) {
		t.Errorf("Explain of an ended trial = %+v", c)
	}
	if err := f.Restore([]byte(`{"trials": 9, "queue": [{"seq": [{"node": "n1", "site": "wal.save#Write.0", "occ": 1, "fault": {"Kind": 4}}],
		"score": 2, "after": [{"node": "n2", "site": "wal.save#Write.0", "occ": 3}]}]}`)); err != nil {
		t.Fatal(err)
	}
	if f.mem.Queue[0].Trial != -1 {
		t.Errorf("old entry's trial %d, want -1 (not known)", f.mem.Queue[0].Trial)
	}
	for i := 10; i < 40; i++ { // some trials run a seed (one in five), the others a mutant
		p.Begin(TrialInfo{Index: i})
		why := f.Explain(i).Why
		if !strings.HasPrefix(why, "a seed: one fault where random would put it (one trial in five") &&
			!strings.Contains(why, "to a queued sequence [") {
			t.Errorf("trial %d: %q, want a seed or a mutant of the old entry", i, why)
		}
		f.trials.end(i)
	}
}
