package workload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/record"
)

// runEvents runs fn as a workload without a controller and returns the
// events it printed.
func runEvents(t *testing.T, fn func(ctx context.Context, t *T) error) ([]record.ClientEvent, error) {
	t.Helper()
	return runEventsOn(t, testNodes(), fn)
}

// runEventsOn is runEvents on a cluster of nodes.
func runEventsOn(t *testing.T, nodes []Node, fn func(ctx context.Context, t *T) error) ([]record.ClientEvent, error) {
	t.Helper()
	var stdout bytes.Buffer
	err := Run(context.Background(), Env{Nodes: nodes}, &stdout, fn)
	return stdoutEvents(t, stdout.String()), err
}

// stdoutEvents decodes the JSON lines a workload without a controller
// printed.
func stdoutEvents(t *testing.T, stdout string) []record.ClientEvent {
	t.Helper()
	var evs []record.ClientEvent
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line == "" {
			continue
		}
		var ev record.ClientEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Time.IsZero() || ev.Kind == "" {
			t.Fatalf("stdout line is not an event: %q", line)
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestSetup(t *testing.T) {
	errNoLeader := errors.New("no leader")
	for _, tc := range []struct {
		name string
		// failures is how many attempts fail before one succeeds (-1:
		// all of them).
		failures int
		timeout  time.Duration
		// cancelAfter, if set, cancels the caller's context then.
		cancelAfter time.Duration
		// callerTimeout, if set, is the caller's context's deadline.
		callerTimeout time.Duration
		want          []string
		wantErr       bool
		// maxTook bounds how long Setup may take (the deadline is
		// honoured).
		maxTook time.Duration
	}{
		{name: "first attempt", failures: 0, want: []string{"n1/0 progress create table"}},
		{name: "success after retries", failures: 4, want: []string{"n1/0 progress create table"}},
		{
			name: "gives up at its timeout", failures: -1, timeout: 300 * time.Millisecond, wantErr: true,
			want:    []string{"n1/0 error create table: gave up after"},
			maxTook: time.Second,
		},
		{
			name: "gives up at the caller's deadline", failures: -1, timeout: time.Minute, callerTimeout: 300 * time.Millisecond, wantErr: true,
			want:    []string{"n1/0 error create table: gave up after"},
			maxTook: time.Second,
		},
		{
			name: "caller stops waiting", failures: -1, timeout: time.Minute, cancelAfter: 200 * time.Millisecond, wantErr: true,
			want:    nil,
			maxTook: time.Second,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attempts := 0
			var took time.Duration
			var serr error
			evs, err := runEvents(t, func(ctx context.Context, wt *T) error {
				c := wt.Client("n1")
				c.SetupTimeout = tc.timeout
				sctx, cancel := context.WithCancel(ctx)
				defer cancel()
				if tc.callerTimeout > 0 {
					sctx, cancel = context.WithTimeout(sctx, tc.callerTimeout)
					defer cancel()
				}
				if tc.cancelAfter > 0 {
					time.AfterFunc(tc.cancelAfter, cancel)
				}
				start := time.Now()
				serr = c.Setup(sctx, "create table", func(ctx context.Context) error {
					attempts++
					if tc.failures < 0 || attempts <= tc.failures {
						return errNoLeader
					}
					return nil
				})
				took = time.Since(start)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if (serr != nil) != tc.wantErr {
				t.Fatalf("Setup error %v, want error %v", serr, tc.wantErr)
			}
			if serr != nil && !errors.Is(serr, errNoLeader) {
				t.Errorf("Setup error %v does not wrap the last failure", serr)
			}
			got := kinds(evs)
			if len(got) != len(tc.want) {
				t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("event %d: %q, want prefix %q", i, got[i], tc.want[i])
				}
			}
			if tc.failures > 0 && attempts != tc.failures+1 {
				t.Errorf("%d attempts, want %d", attempts, tc.failures+1)
			}
			if tc.maxTook > 0 && took > tc.maxTook {
				t.Errorf("Setup took %s, want at most %s", took, tc.maxTook)
			}
		})
	}
}

func TestSetupAttemptTimeout(t *testing.T) {
	// A hanging attempt is cut by the per-request timeout and retried.
	attempts := 0
	evs, err := runEvents(t, func(ctx context.Context, wt *T) error {
		c := wt.Client("n1")
		c.Timeout = 20 * time.Millisecond
		return c.Setup(ctx, "connect", func(ctx context.Context) error {
			attempts++
			if attempts < 3 {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(kinds(evs), "\n"); got != "n1/0 progress connect" {
		t.Errorf("events:\n%s", got)
	}
}

func TestSetupBackoff(t *testing.T) {
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{
		{1, 50 * time.Millisecond},
		{2, 100 * time.Millisecond},
		{3, 200 * time.Millisecond},
		{4, 250 * time.Millisecond},
		{50, 250 * time.Millisecond},
	} {
		if got := setupBackoff(tc.attempt); got != tc.want {
			t.Errorf("setupBackoff(%d) = %s, want %s", tc.attempt, got, tc.want)
		}
	}
}

func TestReportSetupFailure(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		callerErr, workloadErr error
		want                   bool
	}{
		{"own timeout", nil, nil, true},
		{"caller's deadline", context.DeadlineExceeded, nil, true},
		{"caller cancelled", context.Canceled, nil, false},
		{"workload over", context.DeadlineExceeded, context.DeadlineExceeded, false},
	} {
		if got := reportSetupFailure(tc.callerErr, tc.workloadErr); got != tc.want {
			t.Errorf("%s: reportSetupFailure = %v, want %v", tc.name, got, tc.want)
		}
	}
}
