package cluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the copying goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStartProcess(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), helperEnv+"=1", "GOFAULT_X=42")
	tests := []struct {
		name    string
		args    []string
		timeout time.Duration
		cancel  bool // cancel the context once started
		stop    bool // Stop with a short grace
		want    Exit // PID and Time are not compared
		stdout  string
	}{
		{"success", []string{bin, "echo"}, 0, false, false, Exit{Code: 0}, "GOFAULT_X=42\n"},
		{"exit status", []string{bin, "exit", "7"}, 0, false, false, Exit{Code: 7}, ""},
		{"timeout", []string{bin, "hang", "127.0.0.1:0"}, 200 * time.Millisecond, false, false, Exit{Code: -1, Signal: "SIGKILL", Reason: ReasonTimeout}, ""},
		{"cancelled", []string{bin, "hang", "127.0.0.1:0"}, 0, true, false, Exit{Code: -1, Signal: "SIGKILL", Reason: ReasonCanceled}, ""},
		{"stop graceful", []string{bin, "serve", "127.0.0.1:0"}, 0, false, true, Exit{Code: 0, Reason: ReasonStopped}, ""},
		{"stop hung", []string{bin, "hang", "127.0.0.1:0"}, 0, false, true, Exit{Code: -1, Signal: "SIGKILL", Reason: ReasonStopped}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			dir := t.TempDir()
			log := filepath.Join(dir, "logs", "p.log")
			var out syncBuffer
			p, err := StartProcess(ctx, ProcSpec{Args: tt.args, Dir: dir, Env: env, Log: log, Stdout: &out, Timeout: tt.timeout})
			if err != nil {
				t.Fatal(err)
			}
			if tt.cancel || tt.stop {
				waitFile(t, filepath.Join(dir, "env")) // the helper is up and has its child
			}
			if tt.cancel {
				cancel()
			}
			var e Exit
			if tt.stop {
				grace := 30 * time.Second // returns as soon as the process ends
				if tt.want.Signal == "SIGKILL" {
					grace = 300 * time.Millisecond
				}
				e = p.Stop(15, grace) // SIGTERM
			} else {
				e = p.Wait()
			}
			if e.PID != p.PID() || e.Time.IsZero() {
				t.Errorf("PID %d (want %d), time %v", e.PID, p.PID(), e.Time)
			}
			e.PID, e.Time = 0, time.Time{}
			if e != tt.want {
				t.Errorf("exit %+v, want %+v", e, tt.want)
			}
			if tt.stdout != "" && out.String() != tt.stdout {
				t.Errorf("stdout %q, want %q", out.String(), tt.stdout)
			}
			logData, _ := os.ReadFile(log)
			if tt.stdout != "" && !strings.Contains(string(logData), tt.stdout) {
				t.Errorf("log %q lacks stdout", logData)
			}
			assertClean(t, []int{p.PID()}, nil)
			if again := p.Kill(); again.Reason != tt.want.Reason {
				t.Errorf("Kill after exit changed the reason to %q", again.Reason)
			}
		})
	}
}

// TestStderrToStdout: with StderrToStdout, the Stdout writer and the log
// get stderr's lines too, in the order the process wrote them.
func TestStderrToStdout(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "p.log")
	var out syncBuffer
	p, err := StartProcess(context.Background(), ProcSpec{Args: []string{bin, "interleave"}, Dir: dir,
		Env: append(os.Environ(), helperEnv+"=1"), Log: log, Stdout: &out, StderrToStdout: true})
	if err != nil {
		t.Fatal(err)
	}
	if e := p.Wait(); e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
	const want = "out 1\nerr 2\nout 3\n"
	if got := out.String(); got != want {
		t.Errorf("stdout writer got %q, want %q", got, want)
	}
	if got, _ := os.ReadFile(log); string(got) != want {
		t.Errorf("log %q, want %q", got, want)
	}
}

func TestStartProcessErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := StartProcess(ctx, ProcSpec{}); err == nil {
		t.Error("empty command started")
	}
	if _, err := StartProcess(ctx, ProcSpec{Args: []string{"no-such-program-xyz"}}); err == nil {
		t.Error("missing program started")
	}
	cancel()
	if _, err := StartProcess(ctx, ProcSpec{Args: []string{"true"}}); err == nil {
		t.Error("started with a cancelled context")
	}
}

// waitFile waits for a file the helper writes once it is up.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared", path)
}
