package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func stack(fns ...string) []record.Frame {
	var fs []record.Frame
	for i, f := range fns {
		fs = append(fs, record.Frame{Func: f, File: "x.go", Line: 10 + i})
	}
	return fs
}

func failing(id string, index int, checker, symptom, kind, site, node string, st []record.Frame) *record.Trial {
	t := &record.Trial{ID: id, Index: index, Verdicts: []record.Verdict{
		{Checker: "crash"},
		{Checker: checker, Symptom: symptom, Failed: true, Nodes: []string{node}},
	}}
	if kind != "" {
		k, err := catalog.ParseKind(kind)
		if err != nil {
			panic(err)
		}
		t.Injections = []record.Injection{{Kind: k, SiteID: site, Node: node, Stack: st}}
	}
	return t
}

func TestCluster(t *testing.T) {
	walStack := stack("wal.(*WAL).sync", "wal.(*WAL).Save", "etcdserver.(*raftNode).start.func1")
	walStack2 := stack("wal.(*WAL).sync", "wal.(*WAL).Save", "etcdserver.(*raftNode).start.func1", "runtime.main")
	snapStack := stack("snap.(*Snapshotter).save", "etcdserver.(*EtcdServer).snapshot", "etcdserver.(*EtcdServer).run")
	trials := []*record.Trial{
		failing("1-1", 1, "hang", "client n2/0 made no progress for 3s", "error", "wal.sync", "n2", walStack),
		// Same root cause on another node, a slightly different stack: one finding.
		failing("1-2", 2, "hang", "client n3/0 made no progress for 3s", "error", "wal.sync", "n3", walStack2),
		// Same symptom, unrelated stack: another finding.
		failing("1-3", 3, "hang", "client n2/0 made no progress for 3s", "error", "snap.save", "n2", snapStack),
		// Same stack, another symptom: another finding.
		failing("1-4", 4, "linearizability", "key k1 not linearizable", "error", "wal.sync", "n2", walStack),
		// Same everything, another fault kind: another finding.
		failing("1-5", 5, "hang", "client n2/0 made no progress for 3s", "delay", "wal.sync", "n2", walStack),
		// No fault at all.
		failing("1-6", 6, "crash", "node n1 panicked", "", "", "n1", nil),
		failing("1-7", 7, "crash", "node n3 panicked", "", "", "n3", nil),
		{ID: "1-8", Index: 8, Verdicts: []record.Verdict{{Checker: "hang"}}},
	}
	got := Cluster(trials)
	var lines []string
	for _, f := range got {
		lines = append(lines, fmt.Sprintf("%s|%s|%s|%s|%v|%v", f.Checker, f.Symptom, f.Fault.Kind, f.Fault.Site, f.Trials, f.Nodes))
	}
	want := []string{
		"hang|client n* made no progress for 3s|error|wal.sync|[1-1 1-2]|[n2 n3]",
	}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Fatalf("findings:\n%s\nwant first:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
	if len(got) != 4 {
		t.Fatalf("%d findings, want 4 (no fault-free one):\n%s", len(got), strings.Join(lines, "\n"))
	}
	// The trials without a fault are reported apart, never as findings.
	ff := FaultFree(trials)
	if len(ff) != 1 || ff[0].Fault.Kind != "none" || strings.Join(ff[0].Trials, " ") != "1-6 1-7" {
		t.Fatalf("fault-free failures %+v", ff)
	}
	var ffText bytes.Buffer
	if err := WriteFaultFree(&ffText, ff); err != nil || !strings.Contains(ffText.String(), "fault-free failures: 1") {
		t.Fatalf("fault-free text:\n%s", ffText.String())
	}
	// IDs are stable and distinct.
	again := Cluster(trials)
	ids := map[string]bool{}
	for i := range got {
		if got[i].ID != again[i].ID {
			t.Fatalf("finding IDs changed between runs")
		}
		ids[got[i].ID] = true
	}
	if len(ids) != len(got) {
		t.Fatal("two findings share an ID")
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, got); err != nil || !strings.Contains(buf.String(), "replay   gofault replay 1-1") {
		t.Fatalf("text report:\n%s", buf.String())
	}
}

func TestSymptom(t *testing.T) {
	tests := []struct{ in, want string }{
		{"client n2/0 made no progress for 3s", "client n* made no progress for 3s"},
		{"node n13 exited with status 2", "node n* exited with status 2"},
		{"panic in snapshot", "panic in snapshot"},
	}
	for _, tt := range tests {
		if got := Symptom(tt.in); got != tt.want {
			t.Errorf("Symptom(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRecurrence(t *testing.T) {
	ok := func(checkers ...string) *record.Trial {
		tr := &record.Trial{Verdicts: []record.Verdict{{Checker: "crash"}}}
		for _, c := range checkers {
			tr.Verdicts = append(tr.Verdicts, record.Verdict{Checker: c, Symptom: "n2 says " + c, Failed: true})
		}
		return tr
	}
	tests := []struct {
		name              string
		orig, replayed    *record.Trial
		recurred, missing string
	}{
		{"same failure", ok("linearizability"), ok("linearizability"), "[linearizability: n* says linearizability]", "[]"},
		{"more failures", ok("linearizability"), ok("linearizability", "hang"), "[linearizability: n* says linearizability]", "[]"},
		{"passed", ok("linearizability"), ok(), "[]", "[linearizability: n* says linearizability]"},
		{"part", ok("linearizability", "hang"), ok("hang"), "[hang: n* says hang]", "[linearizability: n* says linearizability]"},
		{"original passed", ok(), ok("hang"), "[]", "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recurred, missing := Recurrence(tt.orig, tt.replayed)
			if fmt.Sprint(recurred) != tt.recurred || fmt.Sprint(missing) != tt.missing {
				t.Errorf("Recurrence = %v, %v; want %s, %s", recurred, missing, tt.recurred, tt.missing)
			}
		})
	}
}
