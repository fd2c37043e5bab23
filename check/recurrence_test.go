package check

import (
	"fmt"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

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

func TestNotInjected(t *testing.T) {
	inj := func(site, node string, occ int) record.Injection {
		return record.Injection{Kind: catalog.KindCrash, SiteID: site, Node: node, Occurrence: occ}
	}
	cut := func(site, node string) record.Injection {
		return record.Injection{Kind: catalog.KindLeaderCut, SiteID: site, Node: node, Occurrence: 1}
	}
	led := func(inj record.Injection, role string) record.Injection {
		inj.Role = role
		return inj
	}
	trial := func(injs ...record.Injection) *record.Trial { return &record.Trial{Injections: injs} }
	tests := []struct {
		name           string
		orig, replayed *record.Trial
		want           string
	}{
		{"same", trial(inj("a", "n2", 40)), trial(inj("a", "n2", 40)), "[]"},
		{"later occurrence", trial(inj("a", "n2", 40)), trial(inj("a", "n2", 41)), "[]"},
		{"never reached", trial(inj("a", "n2", 195)), trial(), "[crash at a on n2, occurrence 195]"},
		{"other node", trial(inj("a", "n2", 1)), trial(inj("a", "n3", 1)), "[crash at a on n2, occurrence 1]"},
		{"second of a sequence", trial(inj("a", "n2", 3), inj("a", "n2", 9)), trial(inj("a", "n2", 3)), "[crash at a on n2, occurrence 9]"},
		{"no faults", trial(), trial(), "[]"},
		{"a leadercut on another leader", trial(cut("a", "n2")), trial(cut("a", "n1")), "[]"},
		{"a leadercut never reached", trial(cut("a", "n2")), trial(inj("a", "n2", 1)), "[leadercut at a on n2, occurrence 1]"},
		{"a crash of the leader on another leader", trial(led(inj("a", "n2", 4), "leader")), trial(led(inj("a", "n1", 4), "leader")), "[]"},
		{"a crash of the leader never reached", trial(led(inj("a", "n2", 4), "leader")), trial(), "[crash at a on n2, occurrence 4]"},
		{"a crash of a follower on another member", trial(led(inj("a", "n2", 4), "follower")), trial(led(inj("a", "n1", 4), "follower")), "[crash at a on n2, occurrence 4]"},
	}
	// seaweedfs's goraft role: a string field, "leader" its leader value.
	role := &catalog.Role{Pkg: "github.com/seaweedfs/raft", Type: "server", Field: "state", RoleType: "string",
		Values: []catalog.RoleValue{{Value: 1, Name: "candidate"}, {Value: 2, Name: "follower"}, {Value: 3, Name: "leader"}}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fmt.Sprint(NotInjected(tt.orig, tt.replayed, role)); got != tt.want {
				t.Errorf("NotInjected = %s; want %s", got, tt.want)
			}
		})
	}
}
