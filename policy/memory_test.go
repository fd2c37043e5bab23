package policy

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func past(trial, site string, kind catalog.Kind, err string, delay time.Duration, role string, status record.Status) Past {
	return Past{Trial: trial, Status: status, Injection: record.Injection{SiteID: site, Kind: kind, Error: err, Delay: delay, Role: role}}
}

func TestNewMemory(t *testing.T) {
	cat := testCatalog()
	wal := &cat.Sites[0]
	m := NewMemory(cat, []int64{1, 2}, []Past{
		past("1-1", wal.ID, catalog.KindError, "EIO", 0, "leader", record.StatusOK),
		past("1-2", wal.ID, catalog.KindError, "EIO", 0, "leader", record.StatusOK),
		past("1-3", wal.ID, catalog.KindError, "EIO", 0, "follower", record.StatusFailed),
		past("2-1", wal.ID, catalog.KindCrash, "", 0, "leader", record.StatusError),
		past("2-2", "gone.site#0", catalog.KindCrash, "", 0, "", record.StatusOK),      // the catalog no longer has it
		past("2-3", wal.ID, catalog.KindError, "EBADF", 0, "leader", record.StatusOK),  // nor this error
		past("2-4", wal.ID, catalog.KindDelay, "", 2*time.Second, "", record.StatusOK), // a delay by its length
		past("2-4", wal.ID, catalog.KindCrash, "", 0, "leader", record.StatusOK),       // a second injection of 2-4
	})
	eio := Fault{Kind: catalog.KindError, Error: 1}
	tests := []struct {
		name string
		f    Fault
		role string
		want Tally
		w    float64
	}{
		{"quiet twice on the leader", eio, "leader", Tally{Tried: 2, Quiet: 2}, 1.0 / 3},
		{"a symptom on a follower", eio, "follower", Tally{Tried: 1, Symptom: 1}, 1},
		{"another role: never tried", eio, "", Tally{}, 1},
		{"another error: never tried", Fault{Kind: catalog.KindError, Error: 2}, "leader", Tally{}, 1},
		{"a crash that could not run, then a quiet one", Fault{Kind: catalog.KindCrash}, "leader", Tally{Tried: 2, Quiet: 1}, 0.5},
		{"a delay of the same length", Fault{Kind: catalog.KindDelay, Delay: 2 * time.Second}, "", Tally{Tried: 1, Quiet: 1}, 0.5},
		{"a delay of another length", Fault{Kind: catalog.KindDelay, Delay: time.Second}, "", Tally{}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := m.Of(wal, tt.f, tt.role)
			if got != tt.want || got.Weight() != tt.w {
				t.Errorf("Of = %+v (weight %v), want %+v (weight %v)", got, got.Weight(), tt.want, tt.w)
			}
		})
	}
	if m.Trials != 5 || m.Len() != 4 {
		t.Errorf("Trials %d, Len %d; want 5 trials (2-4 once; 2-2 and 2-3 not: their faults are gone), 4 faults", m.Trials, m.Len())
	}
	known := m.Known()
	if len(known) != 4 || known[0].Symptom != 1 || known[1].Quiet != 2 {
		t.Errorf("Known: %+v; want the symptom first, then the most quiet", known)
	}
	if s := m.String(); !strings.Contains(s, "5 fault trials of campaign 1, 2 (4 faults)") {
		t.Errorf("String = %q", s)
	}
	var none *Memory
	if none.Len() != 0 || none.Of(wal, eio, "") != (Tally{}) || none.Known() != nil || none.String() != "" {
		t.Error("a nil Memory is not empty")
	}
}

// memoryStream is a trial whose requests mostly come from a hot site
// (wal.save, 95 of 100) and rarely from a cold one (rafthttp.read).
func memoryStream(cat *catalog.Catalog) stream {
	var s stream
	for i := range 100 {
		site := &cat.Sites[0]
		if i%20 == 19 {
			site = &cat.Sites[2]
		}
		s = append(s, Request{Node: "n1", Site: site})
	}
	return s
}

// grantsAt runs trials of memoryStream through p and returns how many
// trials injected, and how many of those at the cold site.
func grantsAt(t *testing.T, p Policy, cat *catalog.Catalog, trials int) (injected, cold int) {
	t.Helper()
	for trial := range trials {
		p.Begin(TrialInfo{Index: trial, Nodes: []string{"n1"}})
		granted := false
		for i, r := range memoryStream(cat) {
			r.Trial, r.Seq = trial, i
			d := p.Decide(&r)
			if d.Fault.Kind != catalog.KindNone && !granted {
				granted = true
				injected++
				if r.Site.Index == 2 {
					cold++
				}
			}
		}
		p.End(Outcome{Index: trial, Requests: 100})
	}
	return injected, cold
}

// quietPast is trials trials, each with every fault random and spread
// offer at the test catalog's site id (two errors, a delay, a crash)
// tried and passed: a memory that has tried them all quietly.
func quietPast(id string, trials int) []Past {
	var ps []Past
	for i := range trials {
		for _, in := range []record.Injection{
			{Kind: catalog.KindError, Error: "EIO"}, {Kind: catalog.KindError, Error: "ENOSPC"},
			{Kind: catalog.KindDelay, Delay: 2 * time.Second}, {Kind: catalog.KindCrash},
		} {
			in.SiteID = id
			ps = append(ps, Past{Trial: fmt.Sprintf("1-%d", i), Status: record.StatusOK, Injection: in})
		}
	}
	return ps
}

func TestRandomWithMemory(t *testing.T) {
	cat := testCatalog()
	wal := &cat.Sites[0]
	// Every fault random offers at the hot site, tried quietly 30 times.
	mem := NewMemory(cat, []int64{1}, quietPast(wal.ID, 30))
	if mem.Of(wal, Fault{Kind: catalog.KindCrash}, "").Quiet != 30 {
		t.Fatalf("memory: %+v", mem.Known())
	}
	const trials = 300
	injNone, coldNone := grantsAt(t, mustNew(t, "random", Env{Catalog: cat, Seed: 11}), cat, trials)
	injMem, coldMem := grantsAt(t, mustNew(t, "random", Env{Catalog: cat, Seed: 11, Memory: mem}), cat, trials)
	t.Logf("without memory: %d of %d trials injected, %d at the cold site; with: %d, %d", injNone, trials, coldNone, injMem, coldMem)
	// Without memory a grant falls where the requests are: 5 % at the cold
	// site. With it the hot site's requests weigh 1/31 each: 95/31 ≈ 3.1
	// against 5, so about 60 % of the grants go to the cold site.
	if float64(coldNone) > 0.15*float64(injNone) {
		t.Errorf("without memory %d of %d grants at the cold site; want about 5 %%", coldNone, injNone)
	}
	if float64(coldMem) < 0.4*float64(injMem) {
		t.Errorf("with memory %d of %d grants at the cold site; want most", coldMem, injMem)
	}
	// The probability is sized on the weighted requests: trials still
	// inject (measured: 99 % of trials either way, after the first few).
	if float64(injMem) < 0.9*trials {
		t.Errorf("with memory only %d of %d trials injected", injMem, trials)
	}
}

func TestRandomEmptyMemoryChangesNothing(t *testing.T) {
	cat := testCatalog()
	a := replay(mustNew(t, "random", Env{Catalog: cat, Seed: 3}), cat, 30, 60)
	b := replay(mustNew(t, "random", Env{Catalog: cat, Seed: 3, Memory: NewMemory(cat, nil, nil)}), cat, 30, 60)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("an empty memory changed random's decisions:\n%v\n%v", a, b)
	}
}

func TestRandomExplainsMemory(t *testing.T) {
	cat := testCatalog()
	wal := &cat.Sites[0]
	mem := NewMemory(cat, []int64{4}, []Past{past("4-1", wal.ID, catalog.KindCrash, "", 0, "", record.StatusOK)})
	p := mustNew(t, "random", Env{Catalog: cat, Seed: 1, Memory: mem, Kinds: []catalog.Kind{catalog.KindCrash}})
	e, ok := p.(Explainer)
	if !ok {
		t.Fatal("random is no Explainer")
	}
	for trial := range 20 {
		p.Begin(TrialInfo{Index: trial, Nodes: []string{"n1"}})
		for i, r := range memoryStream(cat) {
			r.Trial, r.Seq = trial, i
			if d := p.Decide(&r); d.Fault.Kind != catalog.KindNone {
				why := e.Explain(trial).Why
				if !strings.Contains(why, "crash at "+wal.ID+", tried 1 times before (1 quiet, 0 with a symptom)") || !strings.Contains(why, "1 fault trials of campaign 4") {
					t.Fatalf("Explain = %q", why)
				}
				return
			}
		}
		p.End(Outcome{Index: trial, Requests: 100})
	}
	t.Fatal("no grant in 20 trials")
}
