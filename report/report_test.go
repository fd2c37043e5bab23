package report

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
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
	got := New(trials, Options{}).Findings
	var lines []string
	for _, f := range got {
		var sites []string
		for _, st := range f.Sites {
			sites = append(sites, fmt.Sprintf("%s@%s%v", st.Fault.Kind, st.Fault.Site, st.Trials))
		}
		lines = append(lines, fmt.Sprintf("%s|%s|%v|%v|%s", f.Checker, f.Symptom, f.Trials, f.Nodes, strings.Join(sites, " ")))
	}
	// One finding per symptom; the faults that led to it inside, the
	// site with most trials first; a stack-similar fault at the same site
	// is one site, another site or another kind is another.
	want := []string{
		"hang|client n* made no progress for 3s|[1-1 1-2 1-3 1-5]|[n2 n3]|error@wal.sync[1-1 1-2] error@snap.save[1-3] delay@wal.sync[1-5]",
		"linearizability|key k1 not linearizable|[1-4]|[n2]|error@wal.sync[1-4]",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if got[0].Fault.Site != "wal.sync" || got[0].Replay != "gofault replay 1-1" || got[0].Sites[1].Replay != "gofault replay 1-3" {
		t.Errorf("first finding's fault %+v, replay %q, second site's replay %q", got[0].Fault, got[0].Replay, got[0].Sites[1].Replay)
	}
	// The trials without a fault are reported apart, never as findings.
	ff := New(trials, Options{}).FaultFree
	if len(ff) != 1 || ff[0].Fault.Kind != "none" || strings.Join(ff[0].Trials, " ") != "1-6 1-7" {
		t.Fatalf("fault-free failures %+v", ff)
	}
	ff[0].Reruns = map[string]record.Rerun{"1-6": {Runs: 2, Recurred: 2}}
	var ffText bytes.Buffer
	if err := WriteFaultFree(&ffText, ff); err != nil || !strings.Contains(ffText.String(), "fault-free failures: 1") ||
		!strings.Contains(ffText.String(), "re-runs  1-6 recurred in 2 of 2 re-runs (reproducible)") {
		t.Fatalf("fault-free text:\n%s", ffText.String())
	}
	// IDs are stable and distinct.
	again := New(trials, Options{}).Findings
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
	if err := WriteText(&buf, got); err != nil || !strings.Contains(buf.String(), "replay   gofault replay 1-1") ||
		!strings.Contains(buf.String(), "sites    3 (the faults that led to this symptom") || !strings.Contains(buf.String(), "fault 2  error at snap.save on n2 (1 trials; gofault replay 1-3)") {
		t.Fatalf("text report:\n%s", buf.String())
	}
}

// logTrial is a trial whose log checker reported the given new-log
// symptoms after an error at site reached by st.
func logTrial(id string, index int, site string, st []record.Frame, symptoms ...string) *record.Trial {
	return &record.Trial{ID: id, Index: index,
		Injections: []record.Injection{{Kind: catalog.KindError, SiteID: site, Node: "n1", Stack: st}},
		Verdicts:   []record.Verdict{{Checker: "log", Failed: true, Symptom: symptoms[0], Symptoms: symptoms, Nodes: []string{"n1"}}},
	}
}

// partitionLogTrial is logTrial for a partition of node at an observation
// point: an injection without a stack.
func partitionLogTrial(id string, index int, point, node string, symptoms ...string) *record.Trial {
	t := logTrial(id, index, point, nil, symptoms...)
	t.Injections[0].Kind, t.Injections[0].Node = catalog.KindPartition, node
	return t
}

func TestGenericConsequences(t *testing.T) {
	lost := "new warn log at rafthttp/peer.go: lost TCP streaming connection with remote peer"
	odd := "new error log at mvcc/kvstore.go: revision went backwards"
	a := stack("wal.(*WAL).sync", "wal.(*WAL).Save")
	a2 := stack("wal.(*WAL).sync", "wal.(*WAL).Save", "etcdserver.(*raftNode).start.func1")
	b := stack("snap.(*Snapshotter).save", "etcdserver.(*EtcdServer).snapshot")
	c := stack("backend.(*batchTx).commit", "backend.(*backend).run")
	d := stack("rafthttp.(*streamWriter).run", "rafthttp.(*peer).send")
	tests := []struct {
		name     string
		trials   []*record.Trial
		opts     Options
		findings []string // "symptom: trials"
		generic  []string
	}{
		{
			name: "a template after three unrelated sites is generic; the trial's other template stays a finding",
			trials: []*record.Trial{
				logTrial("1-1", 1, "wal.sync", a, lost),
				logTrial("1-2", 2, "snap.save", b, lost, odd),
				logTrial("1-3", 3, "backend.commit", c, lost),
			},
			findings: []string{odd + ": [1-2]"},
			generic:  []string{lost + ": [1-1 1-2 1-3]"},
		},
		{
			name: "related sites (similar stacks) count once",
			trials: []*record.Trial{
				logTrial("1-1", 1, "wal.sync", a, lost),
				logTrial("1-2", 2, "wal.sync2", a2, lost),
				logTrial("1-3", 3, "snap.save", b, lost),
			},
			findings: []string{lost + ": [1-1 1-2 1-3]"},
		},
		{
			name: "three stackless partitions at one observation point are one site: the symptom stays a finding",
			trials: []*record.Trial{
				partitionLogTrial("1-1", 1, "observe:raft.send:MsgApp", "n1", lost),
				partitionLogTrial("1-2", 2, "observe:raft.send:MsgApp", "n2", lost),
				partitionLogTrial("1-3", 3, "observe:raft.send:MsgApp", "n3", lost),
			},
			findings: []string{lost + ": [1-1 1-2 1-3]"},
		},
		{
			name: "three stackless partitions at three observation points are three sites: generic",
			trials: []*record.Trial{
				partitionLogTrial("1-1", 1, "observe:raft.send:MsgApp", "n1", lost),
				partitionLogTrial("1-2", 2, "observe:raft.recv:MsgVote", "n1", lost),
				partitionLogTrial("1-3", 3, "observe:lease.renew", "n1", lost),
			},
			generic: []string{lost + ": [1-1 1-2 1-3]"},
		},
		{
			name: "the same site with unlike stacks is one site",
			trials: []*record.Trial{
				logTrial("1-1", 1, "wal.sync", a, lost),
				logTrial("1-2", 2, "wal.sync", b, lost),
				logTrial("1-3", 3, "wal.sync", c, lost),
			},
			findings: []string{lost + ": [1-1 1-2 1-3]"},
		},
		{
			// minikv's restream bug: any crash leaks a replication stream
			// that the leader reports every second from then on.
			name: "a template still logged after every fault's window closed is never generic (planted)",
			trials: []*record.Trial{
				logTrial("1-1", 1, "wal.sync", a, lost),
				lasting(logTrial("1-2", 2, "snap.save", b, lost), lost),
				logTrial("1-3", 3, "backend.commit", c, lost),
			},
			findings: []string{lost + ": [1-1 1-2 1-3]"},
		},
		{
			name: "the threshold is an option",
			trials: []*record.Trial{
				logTrial("1-1", 1, "wal.sync", a, lost),
				logTrial("1-2", 2, "snap.save", b, lost),
				logTrial("1-3", 3, "backend.commit", c, lost),
				logTrial("1-4", 4, "stream.run", d, lost),
			},
			opts:     Options{GenericSites: 5},
			findings: []string{lost + ": [1-1 1-2 1-3 1-4]"},
		},
		{
			name: "a negative threshold turns the rule off",
			trials: []*record.Trial{
				logTrial("1-1", 1, "wal.sync", a, lost),
				logTrial("1-2", 2, "snap.save", b, lost),
				logTrial("1-3", 3, "backend.commit", c, lost),
			},
			opts:     Options{GenericSites: -1},
			findings: []string{lost + ": [1-1 1-2 1-3]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := New(tc.trials, tc.opts)
			show := func(fs []Finding) []string {
				var out []string
				for _, f := range fs {
					out = append(out, fmt.Sprintf("%s: %v", f.Symptom, f.Trials))
				}
				return out
			}
			if got := show(r.Findings); fmt.Sprint(got) != fmt.Sprint(tc.findings) {
				t.Errorf("findings %q, want %q", got, tc.findings)
			}
			if got := show(r.Generic); fmt.Sprint(got) != fmt.Sprint(tc.generic) {
				t.Errorf("generic %q, want %q", got, tc.generic)
			}
		})
	}
}

// TestFaultOfSequence: a trial's later faults are listed, in order, after
// its first.
func TestFaultOfSequence(t *testing.T) {
	tr := &record.Trial{Injections: []record.Injection{
		{Node: "n1", SiteID: "a", Kind: catalog.KindCrash, Occurrence: 3},
		{Node: "n1", SiteID: "b", Kind: catalog.KindPowerLoss, Occurrence: 1},
	}}
	f := faultOf(tr)
	if f.Site != "a" || len(f.Then) != 1 || f.Then[0] != "powerloss at b on n1 (occurrence 1)" {
		t.Errorf("faultOf = %+v", f)
	}
}

// TestOneFindingPerRootCause rebuilds the etcd crash campaign that
// reported 8 findings — linearizability and seven combinations of
// revision-monotonic, watch-lost-event, watch-mismatch and watch-progress,
// all after crashes at one WAL site — from synthetic trials: ranked, the
// lost event is the primary symptom of every trial that saw it, the rest
// co-occur, and a trial that lost nothing a watch saw is the
// linearizability finding.
func TestOneFindingPerRootCause(t *testing.T) {
	wal := stack("wal.(*WAL).sync", "wal.(*WAL).Save", "etcdserver.(*raftNode).start.func1")
	crashTrial := func(i int, lin bool, violated ...string) *record.Trial {
		tr := &record.Trial{ID: fmt.Sprintf("7-%d", i), Index: i, Status: record.StatusFailed,
			Injections: []record.Injection{{Kind: catalog.KindCrash, SiteID: "wal.sync", Node: "n2", Stack: wal}}}
		if lin {
			tr.Verdicts = append(tr.Verdicts, record.Verdict{Checker: "linearizability", Failed: true, Symptom: "history not linearizable"})
		}
		if len(violated) > 0 {
			// As gofault stored them before ranking: the set of names.
			tr.Verdicts = append(tr.Verdicts, record.Verdict{Checker: "violations", Failed: true,
				Symptom: "workload saw " + fmt.Sprint(violated) + " violated", Nodes: []string{"n2"}})
			if len(violated) == 1 {
				tr.Verdicts[len(tr.Verdicts)-1].Symptom = "workload saw " + violated[0] + " violated"
			}
		}
		tr.Verdicts = append(tr.Verdicts, record.Verdict{Checker: "hang", Failed: true, Symptom: "client n3/0 made no progress for 3s"})
		return tr
	}
	trials := []*record.Trial{
		crashTrial(1, true, "revision-monotonic", "watch-lost-event"),
		crashTrial(2, false, "watch-lost-event"),
		crashTrial(3, true, "watch-lost-event", "watch-mismatch"),
		crashTrial(4, false, "revision-monotonic", "watch-lost-event", "watch-progress"),
		crashTrial(5, true, "revision-monotonic", "watch-lost-event", "watch-mismatch", "watch-progress"),
		crashTrial(6, false, "watch-lost-event", "watch-progress"),
		crashTrial(7, true, "revision-monotonic", "watch-lost-event", "watch-mismatch"),
		crashTrial(8, true),
	}
	// Grouped by the exact symptoms they stored, these trials were the 8
	// findings of the issue (the hang aside).
	distinct := map[string]bool{}
	for _, tr := range trials {
		for _, v := range tr.Verdicts {
			if v.Checker != "hang" {
				distinct[v.Checker+v.Symptom] = true
			}
		}
	}
	if len(distinct) != 8 {
		t.Fatalf("the synthetic campaign has %d distinct symptoms, want the issue's 8", len(distinct))
	}
	got := New(trials, Options{}).Findings
	var lines []string
	for _, f := range got {
		lines = append(lines, fmt.Sprintf("%s|%s|%v|%d sites", f.Checker, f.Symptom, f.Trials, len(f.Sites)))
	}
	want := []string{
		"violations|workload saw watch-lost-event violated|[7-1 7-2 7-3 7-4 7-5 7-6 7-7]|1 sites",
		"linearizability|history not linearizable|[7-8]|1 sites",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	var co []string
	for _, c := range got[0].CoOccurring {
		co = append(co, fmt.Sprintf("%s: %s %d", c.Checker, c.Symptom, len(c.Trials)))
	}
	wantCo := []string{
		"hang: client n* made no progress for 3s 7",
		"linearizability: history not linearizable 4",
		"violations: workload saw revision-monotonic violated 4",
		"violations: workload saw watch-mismatch violated 3",
		"violations: workload saw watch-progress violated 3",
	}
	sort.Strings(co)
	if strings.Join(co, "\n") != strings.Join(wantCo, "\n") {
		t.Errorf("co-occurring:\n%s\nwant:\n%s", strings.Join(co, "\n"), strings.Join(wantCo, "\n"))
	}
	if got[1].CoOccurring[0].Checker != "hang" || len(got[1].CoOccurring) != 1 {
		t.Errorf("linearizability finding co-occurring %+v, want the hang only", got[1].CoOccurring)
	}
	// The finding's ID is its primary key's, whatever co-occurs.
	again := New(trials[1:2], Options{}).Findings
	if len(again) != 1 || again[0].ID != got[0].ID {
		t.Errorf("finding ID %s from one trial, %s from seven", again[0].ID, got[0].ID)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, got); err != nil || !strings.Contains(buf.String(), "also     [violations] workload saw revision-monotonic violated (in 4 of 7 trials)") {
		t.Errorf("text report lacks the co-occurring symptoms:\n%s", buf.String())
	}
}

// TestPrimaryKeepsSites: trials with one primary symptom but faults at
// unrelated sites stay one finding with a site per fault path, and a trial
// whose primary symptom differs is another finding even at the same site.
func TestPrimaryKeepsSites(t *testing.T) {
	a := stack("wal.(*WAL).sync", "wal.(*WAL).Save")
	b := stack("snap.(*Snapshotter).save", "etcdserver.(*EtcdServer).snapshot")
	two := func(id string, i int, site string, st []record.Frame, first, second record.Verdict) *record.Trial {
		return &record.Trial{ID: id, Index: i, Injections: []record.Injection{{Kind: catalog.KindCrash, SiteID: site, Node: "n1", Stack: st}},
			Verdicts: []record.Verdict{first, second}}
	}
	lost := record.Verdict{Checker: "replicas", Failed: true, Symptom: "members' data differ"}
	hang := record.Verdict{Checker: "hang", Failed: true, Symptom: "client n1/0 made no progress for 3s"}
	logv := record.Verdict{Checker: "log", Failed: true, Symptom: "new error log at x.go: boom", Symptoms: []string{"new error log at x.go: boom"}}
	trials := []*record.Trial{
		two("1-1", 1, "wal.sync", a, hang, lost), // the order of verdicts does not matter
		two("1-2", 2, "snap.save", b, lost, logv),
		two("1-3", 3, "wal.sync", a, logv, hang),
	}
	var lines []string
	for _, f := range New(trials, Options{GenericSites: -1}).Findings {
		var sites []string
		for _, s := range f.Sites {
			sites = append(sites, s.Fault.Site+fmt.Sprint(s.Trials))
		}
		lines = append(lines, fmt.Sprintf("%s|%v|%s", f.Checker, f.Trials, strings.Join(sites, " ")))
	}
	want := []string{"replicas|[1-1 1-2]|wal.sync[1-1] snap.save[1-2]", "hang|[1-3]|wal.sync[1-3]"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestSitesOfAFinding: a finding's sites are fault paths — kind, site and
// similar stacks; a fault without a stack joins the path at its site.
func TestSitesOfAFinding(t *testing.T) {
	a := stack("wal.(*WAL).sync", "wal.(*WAL).Save")
	b := stack("wal.(*WAL).sync2", "snap.(*Snapshotter).save", "etcdserver.(*EtcdServer).snapshot")
	for _, tc := range []struct {
		name   string
		stacks [][]record.Frame
		want   int
	}{
		{"similar stacks: one path", [][]record.Frame{a, a}, 1},
		{"two call paths into one site: two", [][]record.Frame{a, b}, 2},
		{"stackless faults at one point: one", [][]record.Frame{nil, nil, nil}, 1},
		{"a stackless fault joins the stacked path", [][]record.Frame{a, nil}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var trials []*record.Trial
			for i, st := range tc.stacks {
				trials = append(trials, failing(fmt.Sprintf("1-%d", i), i, "hang", "stuck", "partition", "observe:x", "n1", st))
			}
			fs := New(trials, Options{}).Findings
			if len(fs) != 1 || len(fs[0].Sites) != tc.want {
				t.Fatalf("%d findings, sites %+v; want one finding with %d sites", len(fs), fs, tc.want)
			}
		})
	}
}

// lasting marks the log verdict of tr as still logging symptoms after
// every fault's window closed.
func lasting(tr *record.Trial, symptoms ...string) *record.Trial {
	for i := range tr.Verdicts {
		if tr.Verdicts[i].Checker == check.NameLog {
			tr.Verdicts[i].Lasting = append(tr.Verdicts[i].Lasting, symptoms...)
		}
	}
	return tr
}
