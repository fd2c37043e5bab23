package main

import (
	"strings"
	"testing"
)

// TestMetaOutage: the meta group's admitted, designed outage is
// recognised only when a server says its meta layer stopped on a write
// error and every other server says its meta group never had a leader.
func TestMetaOutage(t *testing.T) {
	werr := metaWriteError + ": open : input/output error"
	stopped := metaView{node: "n1", health: werr}
	waiting := func(n string) metaView {
		return metaView{node: n, answered: true, health: "JetStream has not established contact with a meta leader"}
	}
	for _, tc := range []struct {
		name  string
		views []metaView
		want  string // a substring of the reason; "" for none
	}{
		{"n1 stopped before the first election", []metaView{stopped, waiting("n2"), waiting("n3")},
			"n1 (healthz: " + werr + ") stopped its meta Raft node on a write error; n2, n3 have empty logs"},
		{"a leader was known: not by design", []metaView{stopped, {node: "n2", answered: true, everLeader: true}, waiting("n3")}, ""},
		{"a server that does not answer says nothing", []metaView{stopped, waiting("n2"), {node: "n3", health: "connection refused"}}, ""},
		{"no server admits a write error", []metaView{waiting("n1"), waiting("n2"), waiting("n3")}, ""},
		{"another health error is no admission", []metaView{{node: "n1", health: "JetStream not enabled"}, waiting("n2"), waiting("n3")}, ""},
		{"every server stopped: nobody waits", []metaView{stopped, {node: "n2", health: werr}}, ""},
	} {
		got := metaOutage(tc.views)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: metaOutage = %q, want %q", tc.name, got, tc.want)
		}
	}
}
