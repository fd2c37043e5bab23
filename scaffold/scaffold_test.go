package scaffold

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/format"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/record"
)

func TestLibraryOf(t *testing.T) {
	tests := []struct {
		requires []string
		want     string // name and packages
	}{
		{[]string{"github.com/hashicorp/raft", "github.com/hashicorp/raft-boltdb/v2", "github.com/gorilla/mux"},
			"hashicorp/raft [github.com/hashicorp/raft github.com/hashicorp/raft-boltdb/v2]"},
		{[]string{"go.etcd.io/raft/v3"}, "etcd-io/raft [go.etcd.io/raft/v3]"},
		{[]string{"go.etcd.io/etcd/raft/v3"}, "etcd-io/raft [go.etcd.io/etcd/raft/v3]"},
		{[]string{"go.etcd.io/raft/v3", "go.etcd.io/etcd/server/v3"}, "etcd [go.etcd.io/etcd/server/v3/storage/... go.etcd.io/etcd/server/v3/etcdserver/...]"},
		{[]string{"github.com/lni/dragonboat/v3"}, "dragonboat [github.com/lni/dragonboat/v3]"},
		{[]string{"github.com/nats-io/nats-server/v2", "github.com/nats-io/nats.go"}, "nats-server [github.com/nats-io/nats-server/v2/server]"},
		{[]string{"github.com/gorilla/mux"}, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := "none"
			if l := libraryOf(tt.requires); l != nil {
				got = fmt.Sprintf("%s %v", l.Name, l.Packages)
			}
			if got != tt.want {
				t.Errorf("libraryOf(%v) = %s, want %s", tt.requires, got, tt.want)
			}
		})
	}
}

// module writes a Go module of the given files (path: content) and
// returns its directory.
func module(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const emptyMain = "package main\n\nfunc main() {}\n"

func TestInspect(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := module(t, map[string]string{
		"go.mod":              "module example.com/svc\n\ngo 1.21\n\nrequire github.com/hashicorp/raft v1.8.0\n\nrequire go.etcd.io/raft/v3 v3.6.0 // indirect\n",
		"cmd/kvctl/main.go":   emptyMain,
		"cmd/kvd/main.go":     emptyMain,
		"examples/a/main.go":  emptyMain,
		"store/store.go":      "package store\n",
		"internal/x/x_foo.go": "package x\n",
	})
	m, err := Inspect(context.Background(), filepath.Join(dir, "store")) // from a subdirectory
	if err != nil {
		t.Fatal(err)
	}
	if m.Dir != dir || m.Path != "example.com/svc" || m.Library == nil || m.Library.Name != "hashicorp/raft" {
		t.Fatalf("Inspect = %+v", m)
	}
	var mains []string
	for _, x := range m.Mains {
		mains = append(mains, x.Path)
	}
	if want := []string{"./cmd/kvd", "./cmd/kvctl", "./examples/a"}; !slices.Equal(mains, want) {
		t.Errorf("mains %v, want %v (the daemon first, tools and examples last)", mains, want)
	}
	s := m.Starter("svc", ".", "./workload")
	if s.Main != "./cmd/kvd" || !slices.Equal(s.OtherMains, []string{"./cmd/kvctl", "./examples/a"}) ||
		!slices.Equal(s.Packages, []string{"./cmd/kvd", "github.com/hashicorp/raft"}) || !slices.Equal(s.Ports, []string{"raft", "http"}) {
		t.Errorf("Starter = %+v", s)
	}
	// The starting config parses with the library's wiring, and
	// validates once the example command is filled in.
	cmd := []string{}
	for _, c := range s.Command {
		cmd = append(cmd, strings.Trim(c, `"`))
	}
	data, _ := json.Marshal(cmd)
	c, err := config.Parse(s.YAML(), "cluster.command="+string(data))
	if err != nil {
		t.Fatalf("starter does not parse: %v\n%s", err, s.YAML())
	}
	c.Defaults()
	if err := c.Validate(config.Known{}); err != nil {
		t.Errorf("filled starter does not validate: %v", err)
	}
	if c.Target.Main != "./cmd/kvd" || c.Workload.Package != "./workload" || !slices.Equal(c.Cluster.Ports, []string{"raft", "http"}) {
		t.Errorf("parsed starter: main %q workload %q ports %v", c.Target.Main, c.Workload.Package, c.Cluster.Ports)
	}

	if _, err := Inspect(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "no go.mod") {
		t.Errorf("outside a module: %v", err)
	}
}

// TestWorkloadSkeletonFormatted: the skeleton init writes is gofmt's
// format already, so a user's first gofmt or review shows only their edits.
func TestWorkloadSkeletonFormatted(t *testing.T) {
	src := Workload("svc", "http")
	got, err := format.Source(src)
	if err != nil {
		t.Fatalf("the skeleton does not parse: %v", err)
	}
	if !bytes.Equal(got, src) {
		t.Errorf("the skeleton is not gofmt'd; gofmt writes:\n%s", got)
	}
}

// TestWorkloadSkeleton builds the skeleton in a module of its own (the
// standard library alone) and runs it against two HTTP servers standing
// in for nodes: it must report the phases and each node's progress as
// events gofault decodes, and exit 0; its load lasts its own length, or
// the longer one gofault asks for (GOFAULT_LOAD_FULL, the calibration
// trial's), and ends early when gofault creates GOFAULT_LOAD_END's file.
func TestWorkloadSkeleton(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := module(t, map[string]string{
		"go.mod":           "module example.com/svc\n\ngo 1.21\n",
		"workload/main.go": string(Workload("svc", "http")),
	})
	bin := filepath.Join(dir, "wl")
	build := exec.Command("go", "build", "-o", bin, "./workload")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the skeleton does not build: %v\n%s", err, out)
	}
	type node struct {
		Name  string         `json:"name"`
		Host  string         `json:"host"`
		Ports map[string]int `json:"ports"`
	}
	var nodes []node
	for _, name := range []string{"n1", "n2"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		t.Cleanup(srv.Close)
		_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
		var port int
		fmt.Sscan(p, &port)
		nodes = append(nodes, node{Name: name, Host: "127.0.0.1", Ports: map[string]int{"http": port}})
	}
	nodesEnv, _ := json.Marshal(nodes)
	endFile := filepath.Join(t.TempDir(), "load.end")
	if err := os.WriteFile(endFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name            string
		env             []string
		atLeast, atMost time.Duration // the load phase's length
	}{
		{"its own length", []string{"WORKLOAD_DURATION=200ms"}, 200 * time.Millisecond, time.Minute},
		{"the longer load gofault asks for", []string{"WORKLOAD_DURATION=100ms", "GOFAULT_LOAD_FULL=700ms"}, 700 * time.Millisecond, time.Minute},
		{"ended by gofault after the minimum", []string{"WORKLOAD_DURATION=10m", "GOFAULT_LOAD_FULL=20m", "GOFAULT_LOAD_MIN=300ms", "GOFAULT_LOAD_END=" + endFile}, 300 * time.Millisecond, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			run := exec.CommandContext(ctx, bin)
			run.Env = append(append(os.Environ(), "GOFAULT_NODES="+string(nodesEnv), "GOFAULT_SEED=7"), tc.env...)
			var stdout bytes.Buffer
			run.Stdout, run.Stderr = &stdout, os.Stderr
			if err := run.Run(); err != nil {
				t.Fatalf("skeleton run: %v\n%s", err, stdout.String())
			}
			var phases []string
			at := map[string]time.Time{}
			progress := map[string]int{}
			sc := bufio.NewScanner(&stdout)
			for sc.Scan() {
				var e record.ClientEvent
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					t.Fatalf("event %q: %v", sc.Text(), err)
				}
				switch e.Kind {
				case record.EvPhase:
					phases = append(phases, e.Msg)
					at[e.Msg] = e.Time
				case record.EvProgress:
					progress[e.Node]++
				default:
					t.Errorf("unexpected event %s", sc.Text())
				}
			}
			if !slices.Equal(phases, []string{"setup", "load", "verify"}) || progress["n1"] == 0 || progress["n2"] == 0 {
				t.Errorf("phases %v, progress %v", phases, progress)
			}
			if d := at["load"].Sub(at["setup"]); d < tc.atLeast || d > tc.atMost {
				t.Errorf("load phase lasted %s, want %s to %s", d, tc.atLeast, tc.atMost)
			}
		})
	}
}
