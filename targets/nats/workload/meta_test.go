package main

import (
	"strings"
	"testing"
)

// TestMetaOutage: the cluster cannot host the workload's three-replica
// streams, by design, once a server says its meta layer stopped on a
// write error; the reason says why the others elect no leader when the
// meta group never had one.
func TestMetaOutage(t *testing.T) {
	werr := metaWriteError + ": open : input/output error"
	stopped := metaView{node: "n1", health: werr}
	waiting := func(n string) metaView {
		return metaView{node: n, answered: true, health: "JetStream has not established contact with a meta leader"}
	}
	led := func(n string) metaView { return metaView{node: n, answered: true, everLeader: true} }
	const never = "never had a leader and cannot elect one: n2, n3 have empty logs"
	for _, tc := range []struct {
		name    string
		views   []metaView
		want    string // a substring of the reason; "" for none
		without string // a substring the reason must not have
	}{
		{"n1 stopped before the first election", []metaView{stopped, waiting("n2"), waiting("n3")},
			"n1 (healthz: " + werr + ") stopped its JetStream meta Raft node on a write error (or turned JetStream off when a store ran out of resources), for good: it hosts no replica until it restarts", ""},
		{"... and the others cannot elect", []metaView{stopped, waiting("n2"), waiting("n3")}, never, ""},
		{"n1 stopped after the first election", []metaView{stopped, led("n2"), led("n3")},
			"the workload's streams have three", "never had a leader"},
		{"a server that does not answer: no claim about elections", []metaView{stopped, waiting("n2"), {node: "n3", health: "connection refused"}},
			"stopped its JetStream meta Raft node", "never had a leader"},
		{"no server admits a write error", []metaView{waiting("n1"), waiting("n2"), waiting("n3")}, "", ""},
		{"a leader and no admission", []metaView{led("n1"), led("n2"), led("n3")}, "", ""},
		{"JetStream turned off (out of resources) stops the meta node too", []metaView{{node: "n1", health: jsDisabled + " (10076)"}, waiting("n2"), waiting("n3")},
			"n1 (healthz: JetStream not enabled (10076)) stopped its JetStream meta Raft node", ""},
		{"another health error is no admission", []metaView{{node: "n1", health: "JetStream is not current with the meta leader"}, waiting("n2"), waiting("n3")}, "", ""},
	} {
		got := metaOutage(tc.views)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) || tc.without != "" && strings.Contains(got, tc.without) {
			t.Errorf("%s: metaOutage = %q, want %q without %q", tc.name, got, tc.want, tc.without)
		}
	}
}
