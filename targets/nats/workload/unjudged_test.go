package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestUnjudged(t *testing.T) {
	cfg := config{duration: 4 * time.Second, recovery: 15 * time.Second, converge: 5 * time.Second}
	refused := &setupError{
		first:    errors.New("create stream S1 through n1: gave up after 9 attempts in 10s: nats: timeout"),
		retry:    errors.New("create consumer on S2 through n3: context deadline exceeded"),
		recovery: 15 * time.Second,
	}
	connect := errors.New("connect to n2 (nats://127.0.0.1:4222): nats: no servers available for connection")
	for _, tc := range []struct {
		name    string
		err     error
		retried bool
		left    time.Duration
		want    string // substring of the reason; "" when judged
		wantErr error
	}{
		{name: "set up in time", left: 50 * time.Second},
		{name: "set up in time after a retry", retried: true, left: 50 * time.Second},
		{name: "no deadline", retried: true, left: -1},
		{name: "just enough time", retried: true, left: 29 * time.Second},
		{name: "meta layer outage", err: &outageError{why: "n2 (healthz: JetStream meta layer write error: EIO) stopped"}, left: 50 * time.Second,
			want: "no JetStream for the workload by design: n2 (healthz: JetStream meta layer write error"},
		{name: "outage wrapped", err: fmt.Errorf("setup: %w", &outageError{why: "x"}), left: 50 * time.Second, want: "by design: x"},
		{name: "streams refused even after the recovery bound", err: refused, left: 20 * time.Second,
			want: "the cluster refused the workload's streams or consumers: create stream S1 through n1: gave up after 9 attempts in 10s: nats: timeout; retried through every server for 15s: create consumer on S2"},
		{name: "set up too late after a retry", retried: true, left: 20 * time.Second, want: "the setup ended 20s before the workload's deadline, too late for the load and its checks (they need 29s)"},
		// Without a retry the setup goes on as it always did: a
		// workload.timeout too short for the checks must not leave every
		// trial unjudged.
		{name: "late without a retry", left: 20 * time.Second},
		// A failure that is neither the cluster refusing what the checks
		// need nor gofault's fault stays a failed setup phase.
		{name: "a server that cannot be connected to", err: connect, left: 50 * time.Second, wantErr: connect},
		{name: "deadline", err: context.DeadlineExceeded, left: 0, wantErr: context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why, err := unjudged(cfg, tc.err, tc.retried, tc.left)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr != nil) != (err != nil) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			switch {
			case tc.want == "" && why != "":
				t.Errorf("not judged (%s), want judged", why)
			case !strings.Contains(why, tc.want):
				t.Errorf("reason = %q, want it to contain %q", why, tc.want)
			}
		})
	}
}
