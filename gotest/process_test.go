package gotest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestProcessesApart runs the fault-free pass of testdata/ownport at
// --parallel 2: the two runs of TestOwnPortAndTemp meet (each holds what
// it took until the other wrote what it got), each binding the port that
// --env OWNPORT_PORT=${GOFAULT_TEST_PORT} names and creating a file of a
// fixed name in its TMPDIR. Both pass, on two ranges of ports and two
// temp dirs. The control names one port for both with --env: then one
// run cannot bind it, so the two did run at once. About 3 s.
func TestProcessesApart(t *testing.T) {
	const first = 29000 // a range less used than FirstPort's by other programs
	for _, tc := range []struct {
		name   string
		port   string
		passed int
	}{
		{"own ports", "${" + EnvPort + "}", 2},
		{"one port for both", strconv.Itoa(first + 2*PortSpan - 1), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meet := t.TempDir()
			sum, err := Run(context.Background(), Options{
				Module: "testdata/ownport", Package: ".", WorkDir: t.TempDir(), Parallel: 2, Ports: first,
				Env:    []string{"OWNPORT_PORT=" + tc.port, "OWNPORT_MEET=" + meet},
				Policy: "random", Seed: 1, Trials: 0,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Measured) != 1 || sum.Measured[0].Passed != tc.passed || sum.Measured[0].Runs != 2 {
				t.Fatalf("measured %+v, want TestOwnPortAndTemp passed in %d of 2 runs", sum.Measured, tc.passed)
			}
			ents, err := os.ReadDir(meet)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ents {
				data, err := os.ReadFile(filepath.Join(meet, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(data))
			}
			if len(got) != 2 {
				t.Fatalf("the runs wrote %q, want two", got)
			}
			t.Logf("the two runs got:\n%s", strings.Join(got, ""))
			var ports, tmps []string
			for _, g := range got {
				f := strings.Fields(g) // port P tmp DIR err E
				ports, tmps = append(ports, f[1]), append(tmps, f[3])
			}
			if tmps[0] == tmps[1] {
				t.Errorf("both runs had temp dir %s", tmps[0])
			}
			if tc.passed < 2 {
				return
			}
			if ports[0] == ports[1] {
				t.Errorf("both runs had port %s", ports[0])
			}
			for _, p := range ports {
				if n, err := strconv.Atoi(p); err != nil || n < first || (n-first)%PortSpan != 0 {
					t.Errorf("port %s is not the first of a range from %d", p, first)
				}
			}
		})
	}
}

// TestTakePorts: a range held is not handed out again, even within one
// process; once given back it is.
func TestTakePorts(t *testing.T) {
	const first = 29500
	a, releaseA, err := takePorts(first)
	if err != nil {
		t.Fatal(err)
	}
	b, releaseB, err := takePorts(first)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseB()
	if a == b || (a-first)%PortSpan != 0 || (b-first)%PortSpan != 0 {
		t.Errorf("ranges from %d and %d, want two ranges from %d", a, b, first)
	}
	releaseA()
	c, releaseC, err := takePorts(first)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseC()
	if c != a {
		t.Errorf("after %d was given back the next range is %d, want %d", a, c, a)
	}
}

func TestExpandPorts(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"PORT=${GOFAULT_TEST_PORT}", "PORT=20100"},
		{"PEERS=127.0.0.1:${GOFAULT_TEST_PORT},127.0.0.1:${GOFAULT_TEST_PORT+1}", "PEERS=127.0.0.1:20100,127.0.0.1:20101"},
		{"HOME=$HOME ${OTHER} $GOFAULT_TEST_PORT", "HOME=$HOME ${OTHER} $GOFAULT_TEST_PORT"},
	} {
		if got := ExpandPorts(tc.in, 20100); got != tc.want {
			t.Errorf("ExpandPorts(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		o   Options
		bad bool
	}{
		{Options{Env: []string{"A=${GOFAULT_TEST_PORT+99}"}}, false},
		{Options{Env: []string{"A=${GOFAULT_TEST_PORT+100}"}}, true},
		{Options{Ports: 65436}, false},
		{Options{Ports: 65437}, true},
		{Options{Ports: -1}, true},
	} {
		if err := tc.o.checkPorts(); (err != nil) != tc.bad {
			t.Errorf("checkPorts(%+v) = %v, want an error: %v", tc.o, err, tc.bad)
		}
	}
}

// TestProcessEnd: a process's temp dir is removed when it ends, or moved
// to keep (a failed fault trial's) when the test left something there.
func TestProcessEnd(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name string
		file bool // the test left a file
		keep bool
		kept bool
	}{
		{"removed", true, false, false},
		{"kept", true, true, true},
		{"empty, not kept", false, true, false},
	} {
		p, err := startProcess(root, 29700)
		if err != nil {
			t.Fatal(err)
		}
		if tc.file {
			if err := os.WriteFile(filepath.Join(p.tmp, "left"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		keep := ""
		if tc.keep {
			keep = filepath.Join(t.TempDir(), "tmp")
		}
		env := p.env([]string{"A=${GOFAULT_TEST_PORT+2}"})
		if want := []string{"A=" + strconv.Itoa(p.port+2), "TMPDIR=" + p.tmp, EnvPort + "=" + strconv.Itoa(p.port)}; !containsAll(env, want) {
			t.Errorf("%s: env %q lacks %q", tc.name, env, want)
		}
		if err := p.end(keep); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p.tmp); !os.IsNotExist(err) {
			t.Errorf("%s: temp dir %s is still there (%v)", tc.name, p.tmp, err)
		}
		if _, err := os.Stat(filepath.Join(keep, "left")); (err == nil) != tc.kept {
			t.Errorf("%s: kept file: %v, want kept %v", tc.name, err, tc.kept)
		}
	}
}

func containsAll(s, want []string) bool {
	for _, w := range want {
		if !slices.Contains(s, w) {
			return false
		}
	}
	return true
}
