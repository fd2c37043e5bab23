package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func TestWriteTrialsErrors(t *testing.T) {
	log := filepath.Join(t.TempDir(), "n1.log")
	var lines []string
	for i := range 30 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	trials := []*record.Trial{{ID: "1-3", Status: record.StatusError, Err: "cluster did not start: n1 exited\nboom: cannot bind",
		Nodes: []record.Node{{Name: "n1", Log: log}}}}
	var short, full bytes.Buffer
	if err := WriteTrials(&short, trials, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteTrials(&full, trials, true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(short.String(), "boom") || !strings.Contains(short.String(), "(cluster did not start: n1 exited)") {
		t.Errorf("short listing:\n%s", short.String())
	}
	for _, want := range []string{"| boom: cannot bind", "n1 log (last 10 lines of", "| line 29", "| line 20"} {
		if !strings.Contains(full.String(), want) {
			t.Errorf("full listing lacks %q:\n%s", want, full.String())
		}
	}
	if strings.Contains(full.String(), "| line 19\n") {
		t.Errorf("full listing shows more than the last 10 lines:\n%s", full.String())
	}
}

// TestRoles checks that a fault's node shows its role in findings and in
// the trial listing, with the role changes in the full listing, and that
// Reached sums where each site was reached over the trials.
func TestRoles(t *testing.T) {
	t0 := time.Unix(100, 0)
	tr := failing("1-1", 1, "hang", "client n2/0 made no progress", "delay", "wal.sync#0", "n2", stack("wal.(*WAL).sync"))
	tr.Start = t0
	tr.Injections[0].Role = "StateLeader"
	tr.Injections[0].Delay = time.Second
	tr.Roles = []record.RoleChange{{Node: "n2", Role: "StateLeader", Time: t0.Add(1500 * time.Millisecond)}}
	tr.Reached = []record.Reach{
		{SiteID: "wal.sync#0", Role: "StateFollower", State: "raft.run#3", Requests: 40},
		{SiteID: "wal.sync#0", Role: "StateLeader", State: "raft.run#3", Requests: 9},
		{SiteID: "send#1", Requests: 2},
	}
	tr2 := &record.Trial{ID: "1-2", Index: 2, Reached: []record.Reach{{SiteID: "wal.sync#0", Role: "StateLeader", State: "raft.run#3", Requests: 1}}}
	rep := New([]*record.Trial{tr, tr2}, Options{})
	var text, trials bytes.Buffer
	if err := WriteText(&text, rep.Findings); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "delay 1s at wal.sync#0 on n2 (StateLeader)") {
		t.Errorf("finding does not show the role:\n%s", text.String())
	}
	if err := WriteTrials(&trials, []*record.Trial{tr}, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"at wal.sync#0 on n2 (StateLeader)", "roles: n2 StateLeader at 1.5s"} {
		if !strings.Contains(trials.String(), want) {
			t.Errorf("trial listing lacks %q:\n%s", want, trials.String())
		}
	}
	got := Reached([]*record.Trial{tr, tr2})
	want := []SiteReach{
		{Site: "wal.sync#0", Requests: 50, Reached: []Reach{
			{Role: "StateFollower", State: "raft.run#3", Requests: 40, Trials: 1},
			{Role: "StateLeader", State: "raft.run#3", Requests: 10, Trials: 2},
		}},
		{Site: "send#1", Requests: 2, Reached: []Reach{{Requests: 2, Trials: 1}}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Reached = %+v\nwant      %+v", got, want)
	}
	var sites bytes.Buffer
	if err := WriteReached(&sites, got); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wal.sync#0  (50 requests)", "StateLeader", "role unknown", "no state"} {
		if !strings.Contains(sites.String(), want) {
			t.Errorf("sites listing lacks %q:\n%s", want, sites.String())
		}
	}
}

// TestWriteTrialsChoice: a trial whose policy chose a technique for it
// shows the technique and why beneath its line; one without shows nothing.
func TestWriteTrialsChoice(t *testing.T) {
	start := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	chosen := failing("1-41", 41, "hang", "client n2/0 made no progress", "crash", "wal.sync#0", "n2", nil)
	chosen.Policy, chosen.Start, chosen.End = "portfolio", start, start.Add(2*time.Second)
	chosen.Choice = "fuzz"
	chosen.Why = "UCB 1.20: mean reward 0.40 over 5 trials (1 failed, 5 injected) + 0.80 to explore, of 40 trials begun; the best mean; " +
		"its trial 37 revealed 2 new blocks (reward 0.14); appends a crash of n2 at wal.sync#0 (request 1) to trial 37's sequence [delay 1s of n1] (score 3.0, 2 new blocks)"
	plain := &record.Trial{ID: "1-42", Index: 42, Status: record.StatusOK, Policy: "random", Start: start, End: start.Add(time.Second)}
	var b bytes.Buffer
	if err := WriteTrials(&b, []*record.Trial{chosen, plain}, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "1-41 ") ||
		lines[1] != strings.Repeat(" ", 30)+"chose fuzz: "+chosen.Why || !strings.Contains(lines[2], "hang: client n2/0") {
		t.Errorf("the chosen trial's lines:\n%s", b.String())
	}
	if strings.Count(b.String(), "chose ") != 1 {
		t.Errorf("a trial without a choice shows one:\n%s", b.String())
	}
}

// TestWriteTrialsColumns: every status, not_judged the longest, leaves the
// duration column where the others have it.
func TestWriteTrialsColumns(t *testing.T) {
	start := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	var trials []*record.Trial
	for _, s := range []record.Status{record.StatusOK, record.StatusFailed, record.StatusError, record.StatusNotJudged} {
		trials = append(trials, &record.Trial{ID: "1-1", Status: s, Policy: "random", Start: start, End: start.Add(1500 * time.Millisecond)})
	}
	var b bytes.Buffer
	if err := WriteTrials(&b, trials, false); err != nil {
		t.Fatal(err)
	}
	col := -1
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		i := strings.Index(line, "1.5s")
		if i < 0 {
			t.Fatalf("no duration in %q", line)
		}
		if col >= 0 && i != col {
			t.Errorf("duration at column %d in %q, %d in the first line:\n%s", i, line, col, b.String())
		}
		col = i
	}
}

// TestCrossNodeSequenceShown: a fault sequence over two members (the fuzz
// policy's) shows every fault with its member, in order, in the findings
// and in the trial listing.
func TestCrossNodeSequenceShown(t *testing.T) {
	tr := failing("1-7", 7, "replicas", "members' data differ", "crash", "wal.append#Write.0", "n2", stack("server.(*wal).append"))
	tr.Injections[0].Occurrence = 4
	tr.Injections = append(tr.Injections, record.Injection{Kind: catalog.KindCrash, SiteID: "peer.send#Do.0", Node: "n1", Role: "roleLeader", Occurrence: 9})
	var text, trials bytes.Buffer
	if err := WriteText(&text, New([]*record.Trial{tr}, Options{}).Findings); err != nil {
		t.Fatal(err)
	}
	if err := WriteTrials(&trials, []*record.Trial{tr}, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		out  string
		want []string
	}{
		{text.String(), []string{"crash at wal.append#Write.0 on n2", "then crash at peer.send#Do.0 on n1 (roleLeader) (occurrence 9)"}},
		{trials.String(), []string{"crash  at wal.append#Write.0 on n2; crash  at peer.send#Do.0 on n1 (roleLeader)"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.out, w) {
				t.Errorf("no %q in:\n%s", w, tc.out)
			}
		}
	}
}

// TestWriteTrialsInformational: a verdict that passed the trial with a
// note shows beneath the trial's line, as a failure does; a plain pass
// does not.
func TestWriteTrialsInformational(t *testing.T) {
	start := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	tr := &record.Trial{ID: "1-7", Index: 7, Status: record.StatusOK, Policy: "random", Start: start, End: start.Add(time.Second),
		Verdicts: []record.Verdict{
			{Checker: "crash", Symptom: "informational: n2 refused to start on a corruption it detected"},
			{Checker: "hang"},
			{Checker: "log", Symptom: "no new templates"},
		}}
	var b bytes.Buffer
	if err := WriteTrials(&b, []*record.Trial{tr}, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "crash: informational: n2 refused to start") || strings.Contains(out, "hang:") || strings.Contains(out, "no new templates") {
		t.Errorf("trial lines:\n%s", out)
	}
}
