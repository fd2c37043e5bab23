package minikv_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
	"github.com/gofault/gofault/targettest"
)

// storedTrials returns the trials of the campaign whose summary is sum.
func storedTrials(t *testing.T, db string, campaignID int64) []*record.Trial {
	t.Helper()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	trials, err := st.Trials(context.Background(), campaignID)
	if err != nil {
		t.Fatal(err)
	}
	return trials
}

// nodeOf returns tr's record of node.
func nodeOf(tr *record.Trial, node string) record.Node {
	for _, n := range tr.Nodes {
		if n.Name == node {
			return n
		}
	}
	return record.Node{}
}

// TestShapesStrike checks on real minikv clusters that each fault shape of
// issue 42 strikes as it says: a pause keeps the member's process (no
// restart, the same PID) for one of its timer's lengths; a stop restarts
// the member only after its length; a held cut heals at its condition
// (shorter than its cap, saying what met it: the other members' requests,
// another member's snapshot write) or at its cap; a rot writes
// the changed bytes to the file and restarts the member. Each campaign
// injects in every fault trial.
func TestShapesStrike(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end campaigns")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	t.Parallel() // two at a time with the other parallel campaigns, after the sequential tests (see TestCampaigns)
	bin := targettest.CLI(t)
	each := func(t *testing.T, kind catalog.Kind, args []string, check func(t *testing.T, tr *record.Trial, in record.Injection)) {
		t.Helper()
		s, db := runCampaign(t, bin, append([]string{"--policy", "random", "--trials", "3", "--set", "faults.kinds=" + kind.String()}, args...)...)
		n := 0
		for _, tr := range storedTrials(t, db, s.Campaign) {
			for _, in := range tr.Injections {
				if in.Kind != kind {
					t.Errorf("trial %s: a %s fault, want only %s", tr.ID, in.Kind, kind)
					continue
				}
				n++
				check(t, tr, in)
			}
		}
		if n < s.Trials {
			t.Errorf("%d %s faults in %d fault trials, want one each", n, kind, s.Trials)
		}
	}

	t.Run("pause", func(t *testing.T) {
		each(t, catalog.KindPause, []string{"--set", "faults.timers={p: 800ms}"}, func(t *testing.T, tr *record.Trial, in record.Injection) {
			if n := nodeOf(tr, in.Node); n.Restarts != 0 || n.Killed {
				t.Errorf("trial %s: paused %s restarted %d times (killed %v), want its process kept", tr.ID, in.Node, n.Restarts, n.Killed)
			}
			if d := in.Delay; d != 400*time.Millisecond && d != 800*time.Millisecond && d != 1600*time.Millisecond || !strings.HasSuffix(in.Error, "× p") {
				t.Errorf("trial %s: pause of %s (%q), want ½, 1 or 2 × p", tr.ID, in.Delay, in.Error)
			}
		})
	})

	t.Run("stop", func(t *testing.T) {
		each(t, catalog.KindStop, []string{"--set", "faults.timers={p: 2s}"}, func(t *testing.T, tr *record.Trial, in record.Injection) {
			n := nodeOf(tr, in.Node)
			if len(n.Restarted) == 0 {
				t.Errorf("trial %s: stopped %s never started again", tr.ID, in.Node)
				return
			}
			if down := n.Restarted[0].Sub(in.Time); down < in.Delay {
				t.Errorf("trial %s: %s started again %s after its stop, want at least %s", tr.ID, in.Node, down, in.Delay)
			}
		})
	})

	// Held cuts: a fixed-length cut lasts its length; a held one heals at
	// its condition (sooner than its cap, saying what met it) or at its
	// cap.
	for _, hc := range []struct {
		name string
		sets []string
		// met reports whether what met cut in says what its condition
		// asks for; want says that in words.
		met  func(in record.Injection) bool
		want string
	}{
		{"held cut", []string{"--set", "faults.partition.hold=[requests=20]"},
			func(in record.Injection) bool { return strings.Contains(in.Met, "20 requests") },
			"the 20 requests named"},
		{"held cut until a site", []string{"--set", "faults.partition.hold=[site=writeSnapshot:os.Rename]", "--set", "faults.nodes=[n2,n3]"},
			func(in record.Injection) bool {
				return strings.HasSuffix(in.Met, "writeSnapshot:os.Rename#0") && !strings.HasPrefix(in.Met, in.Node+" ")
			},
			"another member's snapshot named"},
	} {
		t.Run(hc.name, func(t *testing.T) {
			each(t, catalog.KindPartition, append(hc.sets, "--set", "faults.partition.duration=1s", "--set", "faults.partition.hold_cap=5s"),
				func(t *testing.T, tr *record.Trial, in record.Injection) {
					switch {
					case in.Until == "":
						if in.Delay != time.Second {
							t.Errorf("trial %s: a cut of fixed length lasted %s, want 1s", tr.ID, in.Delay)
						}
					case in.Met != "":
						if in.Delay >= in.Cap || !hc.met(in) {
							t.Errorf("trial %s: a cut of %s met %q after %s, want within its %s cap, %s", tr.ID, in.Node, in.Met, in.Delay, in.Cap, hc.want)
						}
					case in.Delay != in.Cap || in.Cap != 5*time.Second:
						t.Errorf("trial %s: an unmet held cut lasted %s (cap %s), want its 5s cap", tr.ID, in.Delay, in.Cap)
					}
				})
		})
	}

	t.Run("rot", func(t *testing.T) {
		each(t, catalog.KindRot, nil, func(t *testing.T, tr *record.Trial, in record.Injection) {
			if !strings.Contains(in.Error, "on the disk") {
				t.Errorf("trial %s: rot %q, want what was changed on the disk", tr.ID, in.Error)
			}
			if n := nodeOf(tr, in.Node); n.Restarts == 0 {
				t.Errorf("trial %s: %s not restarted after its rotten write", tr.ID, in.Node)
			}
		})
	})
}
