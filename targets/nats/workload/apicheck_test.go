package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// at is a time t0+ms.
func at(ms int) time.Time {
	return time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
}

// msg is an acknowledged publish to stream A, sent at call and acked at ret (ms).
func msg(id, subject string, seq uint64, call, ret int) apiMsg {
	return apiMsg{id: id, subject: subject, seq: seq, call: at(call), ret: at(ret)}
}

// wantFindings compares findings with "check: substring" expectations.
func wantFindings(t *testing.T, name string, fs []finding, want []string) {
	t.Helper()
	if len(fs) != len(want) {
		t.Errorf("%s: %d findings %v, want %d %v", name, len(fs), fs, len(want), want)
		return
	}
	for i, w := range want {
		check, sub, _ := strings.Cut(w, ": ")
		if fs[i].check != check || !strings.Contains(fs[i].msg, sub) {
			t.Errorf("%s: finding %d = %s: %s, want %s", name, i, fs[i].check, fs[i].msg, w)
		}
	}
}

func TestJudgeAPI(t *testing.T) {
	purge := func(subject string, call, ret int, ok bool) apiRemoval {
		return apiRemoval{subject: subject, call: at(call), ret: at(ret), ok: ok}
	}
	del := func(seq uint64, call, ret int, ok bool) apiRemoval {
		return apiRemoval{seq: seq, call: at(call), ret: at(ret), ok: ok}
	}
	for _, tc := range []struct {
		name string
		msgs []apiMsg
		rms  []apiRemoval
		read streamRead
		want []string
	}{
		{
			name: "nothing removed, all read back",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10), msg("b", "a.n1.1", 2, 20, 30)},
			read: streamRead{first: 1, last: 2, ids: ids(1, "a", "b")},
		},
		{
			name: "a purge of the stream takes earlier messages, later ones kept",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10), msg("b", "a.n2.1", 2, 20, 30), msg("c", "a.n1.0", 3, 60, 70)},
			rms:  []apiRemoval{purge("", 40, 50, true)},
			read: streamRead{first: 3, last: 3, ids: ids(3, "c")},
		},
		{
			name: "a purged message reappears",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10), msg("b", "a.n2.1", 2, 20, 30)},
			rms:  []apiRemoval{purge("", 40, 50, true)},
			read: streamRead{first: 1, last: 2, ids: ids(1, "a", "b")},
			want: []string{"purge-reappeared: 2 purged messages read back: a at 1, acknowledged before the purge of the stream was sent"},
		},
		{
			name: "a subject purge takes only its subject",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10), msg("b", "a.n1.1", 2, 20, 30)},
			rms:  []apiRemoval{purge("a.n1.0", 40, 50, true)},
			read: streamRead{first: 2, last: 2, ids: ids(2, "b")},
		},
		{
			name: "a subject purge must keep other subjects",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10), msg("b", "a.n1.1", 2, 20, 30)},
			rms:  []apiRemoval{purge("a.n1.0", 40, 50, true)},
			read: streamRead{first: 3, last: 2, ids: ids(3)},
			want: []string{"message-lost: b acknowledged at 2, neither purged nor deleted, not read back"},
		},
		{
			name: "a message published after the purge returned is kept",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10), msg("c", "a.n1.0", 2, 60, 70)},
			rms:  []apiRemoval{purge("a.n1.0", 40, 50, true)},
			read: streamRead{first: 3, last: 2, ids: ids(3)},
			want: []string{"message-lost: c acknowledged at 2"},
		},
		{
			name: "a message published during the purge may go or stay",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 35, 45), msg("b", "a.n1.0", 2, 38, 60)},
			rms:  []apiRemoval{purge("a.n1.0", 40, 50, true)},
			read: streamRead{first: 2, last: 2, ids: ids(2, "b")},
		},
		{
			name: "a purge of unknown outcome may have taken a message",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10)},
			rms:  []apiRemoval{purge("", 40, 50, false)},
			read: streamRead{first: 2, last: 1, ids: ids(2)},
		},
		{
			name: "a purge of unknown outcome may take effect after it timed out",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10), msg("b", "a.n1.0", 2, 60, 70), msg("c", "a.n1.0", 3, 80, 90)},
			rms:  []apiRemoval{purge("", 40, 50, false)},
			read: streamRead{first: 3, last: 3, ids: ids(3, "c")},
		},
		{
			name: "an acknowledged purge does not take a message published after it returned",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10), msg("b", "a.n1.0", 2, 60, 70), msg("c", "a.n1.0", 3, 80, 90)},
			rms:  []apiRemoval{purge("", 40, 50, true)},
			read: streamRead{first: 3, last: 3, ids: ids(3, "c")},
			want: []string{"message-lost: b acknowledged at 2"},
		},
		{
			name: "a purge of unknown outcome is no proof the message went",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10)},
			rms:  []apiRemoval{purge("", 40, 50, false)},
			read: streamRead{first: 1, last: 1, ids: ids(1, "a")},
		},
		{
			name: "a deleted sequence is gone, its neighbours kept",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10), msg("b", "a.n1.0", 2, 20, 30), msg("c", "a.n1.0", 3, 40, 50)},
			rms:  []apiRemoval{del(2, 60, 70, true)},
			read: streamRead{first: 1, last: 3, ids: ids(1, "a", "", "c")},
		},
		{
			name: "a deleted sequence read back",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10), msg("b", "a.n1.0", 2, 20, 30)},
			rms:  []apiRemoval{del(2, 60, 70, true)},
			read: streamRead{first: 1, last: 2, ids: ids(1, "a", "b")},
			want: []string{"delete-reappeared: delete of 2"},
		},
		{
			name: "a delete's neighbour lost",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10), msg("b", "a.n1.0", 2, 20, 30)},
			rms:  []apiRemoval{del(2, 60, 70, true)},
			read: streamRead{first: 2, last: 2, ids: ids(2)},
			want: []string{"message-lost: a acknowledged at 1"},
		},
		{
			name: "another message at an acknowledged sequence",
			msgs: []apiMsg{msg("a", "a.n1.0", 1, 0, 10)},
			read: streamRead{first: 1, last: 1, ids: ids(1, "x")},
			want: []string{"message-lost: a acknowledged at 1, x read back there"},
		},
	} {
		wantFindings(t, tc.name, judgeAPI("A", tc.msgs, tc.rms, tc.read), tc.want)
	}
}

func TestJudgeUpdate(t *testing.T) {
	wantFindings(t, "kept", judgeUpdate("A", "a change to 1 replicas", 5, 5), nil)
	wantFindings(t, "nothing acked", judgeUpdate("A", "an update", 0, 0), nil)
	wantFindings(t, "behind", judgeUpdate("A", "a change to 1 replicas", 7, 5),
		[]string{"update-lost: after a change to 1 replicas its last sequence is 5, below 7"})
}

func TestJudgeConsumer(t *testing.T) {
	acks := []pubAck{{1, "a"}, {2, "b"}, {3, "c"}}
	deliv := func(counts ...int) map[uint64]int {
		m := map[uint64]int{}
		for i, n := range counts {
			if n > 0 {
				m[uint64(i+1)] = n
			}
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		first uint64
		cl    consumerLog
		want  []string
	}{
		{name: "every message delivered, the nak'd one twice", first: 1,
			cl: consumerLog{delivered: deliv(1, 2, 1), naks: []nak{{2, 1}}, drained: true}},
		{name: "not drained: not judged", first: 1,
			cl: consumerLog{delivered: deliv(1), naks: []nak{{1, 1}}}},
		{name: "an acknowledged message never delivered", first: 1,
			cl:   consumerLog{delivered: deliv(1, 0, 1), drained: true},
			want: []string{"consumer-lost: never delivered 1 acknowledged messages: b at 2"}},
		{name: "discarded by the stream's limits before delivery", first: 3,
			cl: consumerLog{delivered: deliv(0, 0, 1), drained: true}},
		{name: "a nak'd message not redelivered", first: 1,
			cl:   consumerLog{delivered: deliv(1, 1, 1), naks: []nak{{2, 1}}, drained: true},
			want: []string{"consumer-redelivery: never redelivered 1 nak'd messages: 2 (delivered 1 times before the nak)"}},
		{name: "nak'd twice, redelivered after each", first: 1,
			cl: consumerLog{delivered: deliv(1, 3, 1), naks: []nak{{2, 1}, {2, 2}}, drained: true}},
		{name: "nak'd twice, not redelivered after the second", first: 1,
			cl:   consumerLog{delivered: deliv(1, 2, 1), naks: []nak{{2, 1}, {2, 2}}, drained: true},
			want: []string{"consumer-redelivery: 2 (delivered 2 times"}},
	} {
		wantFindings(t, tc.name, judgeConsumer("S1", "c-n1", acks, tc.first, tc.cl), tc.want)
	}
}

func TestJudgeObject(t *testing.T) {
	content := []byte("hello")
	sum := sha256.Sum256(content)
	other := errors.New("nats: timeout")
	for _, tc := range []struct {
		name    string
		got     []byte
		err     error
		want    []string
		wantErr error
	}{
		{name: "round trip", got: content},
		{name: "other content", got: []byte("hellO"), want: []string{"object-mismatch: 5 bytes read back, not the content put"}},
		{name: "not found", err: fmt.Errorf("get: %w", jetstream.ErrObjectNotFound), want: []string{"object-lost: put acknowledged, then not found"}},
		{name: "digest mismatch", err: jetstream.ErrDigestMismatch, want: []string{"object-mismatch: does not match its digest"}},
		{name: "a failed read is no finding", err: other, wantErr: other},
	} {
		fs, err := judgeObject("OBJ", "o", sum, tc.got, tc.err)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.wantErr)
		}
		wantFindings(t, tc.name, fs, tc.want)
	}
}

func TestCASOutcome(t *testing.T) {
	timeout := errors.New("context deadline exceeded")
	for _, tc := range []struct {
		name    string
		err     error
		want    string
		wantErr bool
	}{
		{"succeeded", nil, "true", false},
		{"key exists (create)", fmt.Errorf("%w: key exists", jetstream.ErrKeyExists), "false", false},
		{"revision mismatch (update)", fmt.Errorf("nats: API error 10164: %w", jetstream.ErrKeyRevisionMismatch), "false", false},
		{"unknown outcome", timeout, "", true},
	} {
		got, err := casOutcome(tc.err)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: casOutcome = %q, %v; want %q, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestNoSuchMsg(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("%w: nats: API error: code=500 err_code=10057 description=no message found", jetstream.ErrMsgDeleteUnsuccessful), true},
		{jetstream.ErrMsgNotFound, true},
		{fmt.Errorf("%w: nats: API error: code=500 err_code=10057 description=sequence 3 not found", jetstream.ErrMsgDeleteUnsuccessful), true},
		{fmt.Errorf("%w: nats: API error: code=500 err_code=10057 description=stream store EOF", jetstream.ErrMsgDeleteUnsuccessful), false},
		{errors.New("context deadline exceeded"), false},
		{nil, false},
	} {
		if got := noSuchMsg(tc.err); got != tc.want {
			t.Errorf("noSuchMsg(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestDrainBudget: the drain gives way to the read-back and the digest
// phase when the workload's deadline is near.
func TestDrainBudget(t *testing.T) {
	now := at(0)
	conv := 5 * time.Second
	for _, tc := range []struct {
		name     string
		deadline time.Time
		want     time.Duration
	}{
		{"no deadline", time.Time{}, drainWait},
		{"plenty of time", now.Add(time.Minute), drainWait},
		{"what is left after the read and converge", now.Add(14 * time.Second), 4 * time.Second},
		{"at least a second", now.Add(3 * time.Second), time.Second},
	} {
		if got := drainBudget(now, tc.deadline, conv); got != tc.want {
			t.Errorf("%s: drainBudget = %v, want %v", tc.name, got, tc.want)
		}
	}
}
