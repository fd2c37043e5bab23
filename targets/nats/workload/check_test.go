package main

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ids builds a read-back map: sequence i+from holds names[i] ("" = absent).
func ids(from uint64, names ...string) map[uint64]string {
	m := map[uint64]string{}
	for i, n := range names {
		if n != "" {
			m[from+uint64(i)] = n
		}
	}
	return m
}

func TestCheckMessages(t *testing.T) {
	for _, tc := range []struct {
		name      string
		acks      []pubAck
		read      streamRead
		conflicts []string
		want      []string // "check: substring of msg"
	}{
		{
			name: "all read back",
			acks: []pubAck{{1, "a"}, {2, "b"}, {3, "c"}},
			read: streamRead{first: 1, last: 4, ids: ids(1, "a", "b", "c", "d")}, // d: an unacked publish that took effect
		},
		{
			name: "empty stream, nothing acked",
			read: streamRead{ids: map[uint64]string{}},
		},
		{
			name: "discarded by the stream's limits",
			acks: []pubAck{{1, "a"}, {2, "b"}, {3, "c"}},
			read: streamRead{first: 3, last: 3, ids: ids(3, "c")},
		},
		{
			name: "missing",
			acks: []pubAck{{1, "a"}, {2, "b"}, {3, "c"}},
			read: streamRead{first: 1, last: 3, ids: ids(1, "a", "", "c")},
			want: []string{"message-lost: b acknowledged at 2, not read back"},
		},
		{
			name: "another message at the acked sequence",
			acks: []pubAck{{1, "a"}, {2, "b"}},
			read: streamRead{first: 1, last: 2, ids: ids(1, "a", "x")},
			want: []string{"message-lost: b acknowledged at 2, x read back there"},
		},
		{
			name: "acked beyond the stream's last sequence",
			acks: []pubAck{{1, "a"}, {2, "b"}, {3, "c"}},
			read: streamRead{first: 1, last: 2, ids: ids(1, "a", "b")},
			want: []string{"message-lost: c acknowledged at 3, after the stream's last sequence 2"},
		},
		{
			name: "two acks at one sequence",
			acks: []pubAck{{1, "a"}, {1, "b"}},
			read: streamRead{first: 1, last: 1, ids: ids(1, "a")},
			want: []string{"message-lost: a and b both acknowledged at 1"},
		},
		{
			name: "an ack repeated for the same message (a deduplicated retry)",
			acks: []pubAck{{1, "a"}, {1, "a"}},
			read: streamRead{first: 1, last: 1, ids: ids(1, "a")},
		},
		{
			name:      "consumers got two messages at one sequence",
			acks:      []pubAck{{1, "a"}},
			read:      streamRead{first: 1, last: 1, ids: ids(1, "a")},
			conflicts: []string{"consumers got a and z at 1"},
			want:      []string{"message-lost: consumers got a and z at 1"},
		},
		{
			name: "stored twice",
			acks: []pubAck{{1, "a"}, {2, "b"}},
			read: streamRead{first: 1, last: 3, ids: ids(1, "a", "b", "a")},
			want: []string{"message-duplicated: a at [1 3]"},
		},
		{
			name: "lost and duplicated",
			acks: []pubAck{{1, "a"}, {2, "b"}},
			read: streamRead{first: 1, last: 2, ids: ids(1, "a", "a")},
			want: []string{"message-lost: b acknowledged at 2, a read back there", "message-duplicated: a at [1 2]"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkMessages("S1", tc.acks, tc.read, tc.conflicts)
			expect(t, got, tc.want)
		})
	}
}

func TestJudgeRecoveryNodes(t *testing.T) {
	rs := resources([]string{"S1", "S2"}, nil)
	fs := judgeRecovery([]string{"n1", "n2", "n3"}, rs, map[string]map[string]probe{
		"n1": {"stream S1": {ok: true, tries: 1}, "stream S2": {tries: 4, err: "timeout"}},
		"n3": {"stream S1": {ok: true, tries: 1}, "stream S2": {ok: true, tries: 1}},
	})
	if len(fs) != 2 || fs[0].node != "n2" || fs[1].node != "n1" {
		t.Errorf("findings = %+v, want recovery about n2, then S2 stalled on n1", fs)
	}
}

func TestJudgeRecovery(t *testing.T) {
	servers := []string{"n1", "n2", "n3"}
	rs := resources([]string{"S1", "S2"}, []string{"c-n1", "c-n2", "c-n3"})
	all := func() map[string]map[string]probe {
		m := map[string]map[string]probe{}
		for _, s := range servers {
			m[s] = map[string]probe{}
			for _, r := range rs {
				m[s][r.String()] = probe{ok: true, tries: 1}
			}
		}
		return m
	}
	// fail makes every try of the resources through the servers fail.
	fail := func(m map[string]map[string]probe, srvs []string, names ...string) {
		for _, s := range srvs {
			for _, n := range names {
				m[s][n] = probe{tries: 3, err: "nats: timeout"}
			}
		}
	}
	s1 := []string{"stream S1", "consumer c-n1 on S1", "consumer c-n2 on S1", "consumer c-n3 on S1"}
	for _, tc := range []struct {
		name string
		edit func(m map[string]map[string]probe)
		want []string
	}{
		{name: "every resource through every server", edit: func(map[string]map[string]probe) {}},
		{
			name: "one server serves nothing",
			edit: func(m map[string]map[string]probe) { m["n2"] = map[string]probe{} },
			want: []string{"recovery: server n2 accepted no publish"},
		},
		{
			name: "one stream stalled on one server (its consumers not judged there)",
			edit: func(m map[string]map[string]probe) {
				fail(m, []string{"n3"}, "stream S2", "consumer c-n1 on S2")
			},
			want: []string{"stream-stalled: stream S2 accepted publishes through n1, n2 but not through n3 after the load (n3: 3 tries, last: nats: timeout)"},
		},
		{
			name: "a stream unavailable everywhere while the other serves",
			edit: func(m map[string]map[string]probe) { fail(m, servers, s1...) },
			want: []string{"stream-unavailable: stream S1 accepted publishes through no server after the load, while stream S2 was served through n1, n2, n3: tried n1: 3 tries, last: nats: timeout; n2: 3 tries, last: nats: timeout; n3: 3 tries"},
		},
		{
			name: "a stream unavailable everywhere is not excused by a server that accepts nothing",
			edit: func(m map[string]map[string]probe) {
				fail(m, servers, s1...)
				m["n3"] = map[string]probe{}
			},
			want: []string{
				"recovery: server n3",
				"stream-unavailable: stream S1 accepted publishes through no server after the load, while stream S2 was served through n1, n2: tried n1: 3 tries, last: nats: timeout; n2: 3 tries, last: nats: timeout; n3: not tried",
			},
		},
		{
			name: "nothing anywhere",
			edit: func(m map[string]map[string]probe) {
				for _, s := range servers {
					m[s] = nil
				}
			},
			want: []string{"recovery: server n1", "recovery: server n2", "recovery: server n3"},
		},
		{
			name: "every stream refused, consumers deliver their backlog: not a partial failure",
			edit: func(m map[string]map[string]probe) {
				fail(m, servers, "stream S1", "stream S2")
			},
			want: []string{"recovery: server n1", "recovery: server n2", "recovery: server n3"},
		},
		{
			name: "a down server is not also stalled",
			edit: func(m map[string]map[string]probe) { m["n1"] = nil; fail(m, []string{"n2"}, s1...) },
			want: []string{"recovery: server n1", "stream-stalled: stream S1 accepted publishes through n3 but not through n2"},
		},
		{
			name: "a consumer stalled on one server",
			edit: func(m map[string]map[string]probe) { fail(m, []string{"n3"}, "consumer c-n2 on S1") },
			want: []string{"consumer-stalled: consumer c-n2 on S1 delivered messages through n1, n2 but not through n3 after the load (n3: 3 tries, last: nats: timeout)"},
		},
		{
			name: "a consumer unavailable everywhere, reported through its own client",
			edit: func(m map[string]map[string]probe) { fail(m, servers, "consumer c-n2 on S1") },
			want: []string{"consumer-unavailable: consumer c-n2 on S1 delivered messages through no server after the load, while consumer c-n1 on S1 was served through n1, n2, n3"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := all()
			tc.edit(m)
			got := judgeRecovery(servers, rs, m)
			expect(t, got, tc.want)
			if tc.name == "a consumer unavailable everywhere, reported through its own client" && got[0].node != "n2" {
				t.Errorf("reported through %s, want n2", got[0].node)
			}
		})
	}
}

func TestJudgeRecoveryOneStream(t *testing.T) {
	// With one stream and no consumers, a stream dead everywhere is every
	// server accepting nothing: nothing else served, so no resource
	// finding beside the servers'.
	rs := resources([]string{"S1"}, nil)
	got := judgeRecovery([]string{"n1", "n2"}, rs, map[string]map[string]probe{
		"n1": {"stream S1": {tries: 2, err: "timeout"}},
		"n2": {"stream S1": {tries: 2, err: "timeout"}},
	})
	expect(t, got, []string{"recovery: server n1", "recovery: server n2"})
}

func TestDigestAndConverged(t *testing.T) {
	streams := []string{"S1", "S2"}
	a := map[string]replicaState{"S1": {Messages: 3, FirstSeq: 1, LastSeq: 3}, "S2": {Messages: 0}}
	behind := map[string]replicaState{"S1": {Messages: 2, FirstSeq: 1, LastSeq: 2}, "S2": {Messages: 0}}
	missing := map[string]replicaState{"S1": {Messages: 3, FirstSeq: 1, LastSeq: 3}}
	if got, want := digest(streams, a), "S1 first=1 last=3 msgs=3; S2 first=0 last=0 msgs=0"; got != want {
		t.Errorf("digest = %q, want %q", got, want)
	}
	if got := digest(streams, missing); !strings.Contains(got, "S2 missing") {
		t.Errorf("digest of a server without S2 = %q, want it to say so", got)
	}
	for _, tc := range []struct {
		name  string
		bySrv []map[string]replicaState
		want  bool
	}{
		{"all equal", []map[string]replicaState{a, a, a}, true},
		{"one did not answer", []map[string]replicaState{a, nil, a}, true},
		{"none answered", []map[string]replicaState{nil, nil, nil}, true},
		{"one behind", []map[string]replicaState{a, behind, a}, false},
		{"one lacks a stream", []map[string]replicaState{a, a, missing}, false},
		{"the only answer lacks a stream", []map[string]replicaState{nil, missing}, false},
	} {
		if got := converged(streams, tc.bySrv); got != tc.want {
			t.Errorf("%s: converged = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	env := map[string]string{"NATS_WORKLOAD_DURATION": "2s", "NATS_WORKLOAD_STREAMS": "3"}
	c, err := loadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.duration != 2*time.Second || c.streams != 3 || c.rate != 40 || c.maxBytes != 120000 {
		t.Errorf("config = %+v", c)
	}
	env["NATS_WORKLOAD_PAYLOAD"] = "8"
	if _, err := loadConfig(func(k string) string { return env[k] }); err == nil {
		t.Error("payload of 8 bytes accepted; want an error (IDs need room)")
	}
	if got := streamNames(2); strings.Join(got, ",") != "S1,S2" {
		t.Errorf("streamNames(2) = %v", got)
	}
	if got := messageID([]byte("n1/0#7 xxxx")); got != "n1/0#7" {
		t.Errorf("messageID = %q", got)
	}
}

// expect compares findings with "check: substring" expectations, in order.
func expect(t *testing.T, got []finding, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("findings = %+v, want %d: %q", got, len(want), want)
	}
	for i, w := range want {
		check, sub, _ := strings.Cut(w, ": ")
		if got[i].check != check || !strings.Contains(got[i].msg, sub) {
			t.Errorf("finding %d = %s: %s, want %s containing %q", i, got[i].check, got[i].msg, check, sub)
		}
	}
}

func TestAllCurrent(t *testing.T) {
	peer := func(name string, current, offline bool) *jetstream.PeerInfo {
		return &jetstream.PeerInfo{Name: name, Current: current, Offline: offline}
	}
	for _, tc := range []struct {
		name string
		ci   *jetstream.ClusterInfo
		want string // "" for settled, else a substring of the error
	}{
		{"settled", &jetstream.ClusterInfo{Leader: "n1", Replicas: []*jetstream.PeerInfo{peer("n2", true, false), peer("n3", true, false)}}, ""},
		{"no information", nil, "no cluster information"},
		{"no leader", &jetstream.ClusterInfo{Replicas: []*jetstream.PeerInfo{peer("n2", true, false), peer("n3", true, false)}}, "no leader"},
		{"a follower unknown", &jetstream.ClusterInfo{Leader: "n1", Replicas: []*jetstream.PeerInfo{peer("n2", true, false)}}, "1 of 2 followers"},
		{"a follower behind", &jetstream.ClusterInfo{Leader: "n1", Replicas: []*jetstream.PeerInfo{peer("n2", true, false), peer("n3", false, false)}}, "replica n3 not current"},
		{"a follower offline", &jetstream.ClusterInfo{Leader: "n1", Replicas: []*jetstream.PeerInfo{peer("n2", true, true), peer("n3", true, false)}}, "replica n2 not current"},
	} {
		err := allCurrent(tc.ci, 3)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want settled", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// TestLeaderless: a clustered stream's info that names no leader (the
// answer of a member whose replica stopped, docs/found.md N5) is not taken
// as the stream's contents; one naming a leader, or a stream outside a
// cluster, is.
func TestLeaderless(t *testing.T) {
	for _, tc := range []struct {
		name string
		info jetstream.StreamInfo
		want bool
	}{
		{"a leader named", jetstream.StreamInfo{Cluster: &jetstream.ClusterInfo{Name: "gofault", Leader: "n1"}}, false},
		{"a replica's own empty state, no leader (trial 1-59)", jetstream.StreamInfo{Cluster: &jetstream.ClusterInfo{Name: "gofault"}}, true},
		{"no cluster", jetstream.StreamInfo{}, false},
	} {
		if got := leaderless(&tc.info); got != tc.want {
			t.Errorf("%s: leaderless = %v, want %v", tc.name, got, tc.want)
		}
	}
}
