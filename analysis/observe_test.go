package analysis

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

func TestObservePass(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "observe"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Dir: dir, Patterns: []string{"example.com/observe/..."}, Passes: []*Pass{ObservePass}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]catalog.ObservePoint{}
	for _, p := range res.Catalog.ObservePoints {
		got[p.Func] = p
	}
	if len(got) != 3 || res.Stats.Totals[CountObservationPoints] != 3 {
		t.Fatalf("points %+v", res.Catalog.ObservePoints)
	}
	names := func(p catalog.ObservePoint) string {
		var ns []string
		for _, v := range p.Vars {
			ns = append(ns, v.Name+"="+v.Expr)
		}
		return strings.Join(ns, " ")
	}
	step := got["(*raft).Step"]
	if step.When != catalog.ObserveHandled || step.Msg != "m" || step.Ptr || names(step) != "msg.Term=m.Term msg.Index=m.Index node.Term=r.Term node.lead=r.lead node.getLead()=r.getLead()" {
		t.Errorf("(*raft).Step: %+v (%s)", step, names(step))
	}
	if step.ID != "observe:example.com/observe/node.(*raft).Step" || step.Line == 0 {
		t.Errorf("ID/position %s %d", step.ID, step.Line)
	}
	send := got["(*Transport).Send"]
	if send.When != catalog.ObserveSend || !send.Slice || send.Msg != "msgs" || names(send) != "msg.Term=gofaultmsg.Term msg.Index=gofaultmsg.Index" {
		t.Errorf("(*Transport).Send: %+v (%s)", send, names(send))
	}
	if relay := got["(relay).Step"]; !relay.Ptr || relay.Msg != "m" || len(relay.Vars) != 2 {
		t.Errorf("(relay).Step: %+v", relay)
	}
}

// TestObservePassConfigured: functions named in the options are points
// too, in each spelling of their names.
func TestObservePassConfigured(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "observe"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name          string
		send, handled []string
		want          map[string]string // Func → When
	}{
		{"none named", nil, nil, map[string]string{}},
		{"method, short name", nil, []string{"(*raft).deliver"}, map[string]string{"(*raft).deliver": catalog.ObserveHandled}},
		{"full and package names", []string{"example.com/observe/node.broadcast"}, []string{"node.(*raft).deliver"},
			map[string]string{"(*raft).deliver": catalog.ObserveHandled, "broadcast": catalog.ObserveSend}},
	} {
		res, err := Run(context.Background(), Options{Dir: dir, Patterns: []string{"example.com/observe/..."}, Passes: []*Pass{ObservePass},
			ObserveSend: tt.send, ObserveHandled: tt.handled})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, p := range res.Catalog.ObservePoints {
			got[p.Func] = p.When
		}
		for fn, when := range tt.want {
			if got[fn] != when {
				t.Errorf("%s: %s is %q, want %q (points %v)", tt.name, fn, got[fn], when, got)
			}
		}
		if len(got) != 3+len(tt.want) {
			t.Errorf("%s: %d points %v, want %d", tt.name, len(got), got, 3+len(tt.want))
		}
	}
}

// writeObserve renders observation points for a golden file, one line
// each: when, function, message parameter and type, sender, receiver,
// variables.
func writeObserve(pts []catalog.ObservePoint) string {
	var b strings.Builder
	for _, p := range pts {
		flags := ""
		if p.Ptr {
			flags += " ptr"
		}
		if p.Slice {
			flags += " slice"
		}
		if p.TypeEntries {
			flags += " type-by-entries"
		}
		hash := func(h bool) string {
			if h {
				return " (hashed)"
			}
			return ""
		}
		var vars []string
		for _, v := range p.Vars {
			vars = append(vars, v.Name+"="+v.Expr)
		}
		fmt.Fprintf(&b, "%s %s line %d: msg %s%s type %q message %q\n\tfrom %q%s to %q%s\n\tvars %s\n",
			p.When, p.ID, p.Line, p.Msg, flags, p.Type, p.Message, p.From, hash(p.FromHash), p.To, hash(p.ToHash), strings.Join(vars, " "))
	}
	return b.String()
}

// TestObservePassMessages: the points of peer messages of other shapes
// than raftpb's, on testdata shaped like hashicorp/raft (RPC structs
// passed to a Transport interface) and nats-server (structs encoded by
// methods of their own), against goldens; the expectations that matter
// are stated here too, so that an -update cannot accept a regression.
func TestObservePassMessages(t *testing.T) {
	for _, tt := range []struct {
		dir     string
		send    []string // Func of the send points
		handled []string // Func of the handled points
		check   func(t *testing.T, got map[string]catalog.ObservePoint)
	}{
		{"observehraft",
			[]string{"(*NetworkTransport).AppendEntries", "(*NetworkTransport).RequestVote", "(*netPipeline).AppendEntries"},
			[]string{"(*Raft).appendEntries", "(*Raft).requestVote"},
			func(t *testing.T, got map[string]catalog.ObservePoint) {
				s := got["(*NetworkTransport).AppendEntries"]
				if s.Msg != "args" || !s.Ptr || s.From != "args.ID" || !s.FromHash || s.To != "id" || !s.ToHash || s.Message != "AppendEntriesRequest" || s.Type != "args.Entries" || !s.TypeEntries {
					t.Errorf("send %+v", s)
				}
				if p := got["(*netPipeline).AppendEntries"]; p.To != "" || p.From != "args.ID" {
					t.Errorf("pipeline %+v", p)
				}
				h := got["(*Raft).appendEntries"]
				if h.Msg != "a" || h.From != "a.ID" || h.To != "r.localID" || !h.ToHash || !hasVar(h, "msg.LeaderCommitIndex") || !hasVar(h, "node.getCurrentTerm()") || hasVar(h, "msg.ProtocolVersion") ||
					hasVar(h, "node.CurrentTerm()") || !hasVar(h, "node.LastIndex()") {
					t.Errorf("handled %+v", h)
				}
			}},
		{"observenats",
			[]string{"(*appendEntry).encode", "(*appendEntryResponse).encode", "(*voteRequest).encode", "(*voteResponse).encode"},
			[]string{"(*raft).processAppendEntry", "(*raft).processAppendEntryResponse", "(*raft).processVoteRequest"},
			func(t *testing.T, got map[string]catalog.ObservePoint) {
				s := got["(*appendEntry).encode"]
				if s.Msg != "ae" || !s.Ptr || s.From != "ae.leader" || !s.FromHash || s.To != "" || !hasVar(s, "msg.pterm") || s.Type != "ae.entries" || !s.TypeEntries {
					t.Errorf("send %+v", s)
				}
				h := got["(*raft).processAppendEntry"]
				if h.From != "ae.leader" || h.To != "n.id" || !hasVar(h, "node.term") || !hasVar(h, "node.commit") || hasVar(h, "node.Term()") {
					t.Errorf("handled %+v", h)
				}
				if v := got["(*raft).processVoteRequest"]; v.From != "vr.candidate" || v.Type != "" || v.TypeEntries {
					t.Errorf("vote %+v", v)
				}
			}},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			dir, err := filepath.Abs(filepath.Join("testdata", tt.dir))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), Options{Dir: dir, Patterns: []string{"example.com/" + tt.dir + "/..."}, Passes: []*Pass{ObservePass}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]catalog.ObservePoint{}
			for _, p := range res.Catalog.ObservePoints {
				got[p.Func] = p
			}
			want := map[string]string{}
			for _, f := range tt.send {
				want[f] = catalog.ObserveSend
			}
			for _, f := range tt.handled {
				want[f] = catalog.ObserveHandled
			}
			for f, when := range want {
				if got[f].When != when {
					t.Errorf("%s is %q, want %q", f, got[f].When, when)
				}
			}
			if len(got) != len(want) || res.Stats.Totals[CountObservationPoints] != len(want) {
				t.Errorf("%d points, want %d: %s", len(got), len(want), writeObserve(res.Catalog.ObservePoints))
			}
			tt.check(t, got)
			out := writeObserve(res.Catalog.ObservePoints)
			out = strings.ReplaceAll(out, dir+string(filepath.Separator), "")
			golden := filepath.Join("testdata", tt.dir+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != out {
				t.Errorf("points differ from %s (run with -update after checking):\n%s", golden, diffLines(string(b), out))
			}
		})
	}
}

func hasVar(p catalog.ObservePoint, name string) bool {
	for _, v := range p.Vars {
		if v.Name == name {
			return true
		}
	}
	return false
}

// TestObservePassConfiguredMessages: a function named in the options
// that takes a peer message struct is a point of that message, whatever
// its name.
func TestObservePassConfiguredMessages(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "observehraft"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Dir: dir, Patterns: []string{"example.com/observehraft/..."}, Passes: []*Pass{ObservePass},
		ObserveHandled: []string{"(*Raft).setupAppendEntries", "(*store).Put"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]catalog.ObservePoint{}
	for _, p := range res.Catalog.ObservePoints {
		got[p.Func] = p
	}
	if p := got["(*Raft).setupAppendEntries"]; p.When != catalog.ObserveHandled || p.Msg != "req" || p.Message != "AppendEntriesRequest" || p.To != "r.localID" {
		t.Errorf("named handler: %+v", p)
	}
	// Request is no peer message: naming its function makes no point.
	if p, ok := got["(*store).Put"]; ok {
		t.Errorf("(*store).Put is a point: %+v", p)
	}
	if len(got) != 6 {
		t.Errorf("%d points, want 6: %s", len(got), writeObserve(res.Catalog.ObservePoints))
	}
}
