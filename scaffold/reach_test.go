package scaffold

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gofault/gofault/config"
)

// pkg is a reached package for chooseLibrary's tables: its module (main:
// the module under test) and what it imports.
func pkg(path, module string, main bool, imports ...string) pkgInfo {
	p := pkgInfo{ImportPath: path, Imports: imports}
	p.Module = &struct {
		Path string
		Main bool
	}{module, main}
	return p
}

// TestChooseLibrary checks the library the node program reaches against
// what go.mod lists: a fork reached beats hashicorp/raft in go.mod only, and
// beats it too when it is reached behind a flag by one package; an etcd
// embedder is an etcd service, not an etcd-io/raft one; a wrapper package
// named raft in the module is no fork; a vendored copy counts.
func TestChooseLibrary(t *testing.T) {
	const mod = "example.com/big"
	fork := pkg("github.com/acme/raft", "github.com/acme/raft", false)
	hashi := pkg("github.com/hashicorp/raft", "github.com/hashicorp/raft", false)
	tests := []struct {
		name     string
		deps     []pkgInfo
		shapes   map[string]string
		requires []string
		want     string // name, like, packages
		why      string
		runnerUp string
	}{
		{"fork reached, hashicorp/raft in go.mod only",
			[]pkgInfo{fork, pkg(mod+"/server", mod, true, fork.ImportPath), pkg(mod+"/cmd/big", mod, true, mod+"/server")},
			map[string]string{fork.ImportPath: shapeHashi}, []string{"github.com/hashicorp/raft", "github.com/acme/raft"},
			"github.com/acme/raft hashicorp/raft [github.com/acme/raft]", "imported by example.com/big/server; its API looks like hashicorp/raft's",
			"github.com/hashicorp/raft: in go.mod, not reached from ./cmd/big"},
		{"fork beats hashicorp/raft behind a flag",
			[]pkgInfo{fork, hashi, pkg(mod+"/server", mod, true, fork.ImportPath), pkg(mod+"/fsm", mod, true, fork.ImportPath),
				pkg(mod+"/legacy", mod, true, hashi.ImportPath), pkg(mod+"/cmd/big", mod, true, mod+"/server", mod+"/fsm", mod+"/legacy")},
			map[string]string{fork.ImportPath: shapeHashi}, []string{"github.com/hashicorp/raft"},
			"github.com/acme/raft hashicorp/raft [github.com/acme/raft]", "imported by 2 of the module's packages (example.com/big/server, ...); its API looks like hashicorp/raft's",
			"hashicorp/raft: imported by example.com/big/legacy"},
		{"etcd embedder",
			[]pkgInfo{pkg("go.etcd.io/raft/v3", "go.etcd.io/raft/v3", false),
				pkg("go.etcd.io/etcd/server/v3/etcdserver", "go.etcd.io/etcd/server/v3", false, "go.etcd.io/raft/v3"),
				pkg("go.etcd.io/etcd/server/v3/embed", "go.etcd.io/etcd/server/v3", false, "go.etcd.io/etcd/server/v3/etcdserver"),
				pkg(mod+"/cmd/big", mod, true, "go.etcd.io/etcd/server/v3/embed")},
			nil, []string{"go.etcd.io/etcd/server/v3"},
			"etcd  [go.etcd.io/etcd/server/v3/storage/... go.etcd.io/etcd/server/v3/etcdserver/...]", "imported by example.com/big/cmd/big",
			"etcd-io/raft: reached from ./cmd/big through go.etcd.io/etcd/server/v3/etcdserver"},
		{"a wrapper named raft is no fork",
			[]pkgInfo{hashi, pkg(mod+"/raft", mod, true, hashi.ImportPath), pkg(mod+"/cmd/big", mod, true, mod+"/raft")},
			map[string]string{mod + "/raft": shapeHashi}, nil,
			"hashicorp/raft  [github.com/hashicorp/raft]", "imported by example.com/big/raft", ""},
		{"a wrapper of a fork is no fork",
			[]pkgInfo{fork, pkg(mod+"/raft", mod, true, fork.ImportPath), pkg(mod+"/a", mod, true, mod+"/raft"), pkg(mod+"/b", mod, true, mod+"/raft"),
				pkg(mod+"/cmd/big", mod, true, mod+"/a", mod+"/b")},
			map[string]string{fork.ImportPath: shapeHashi, mod + "/raft": shapeHashi}, nil,
			"github.com/acme/raft hashicorp/raft [github.com/acme/raft]", "imported by example.com/big/raft; its API looks like hashicorp/raft's", ""},
		{"vendored copy of etcd-io/raft",
			[]pkgInfo{pkg("github.com/other/raft", "github.com/other/raft", false), pkg(mod+"/node", mod, true, "github.com/other/raft"), pkg(mod+"/cmd/big", mod, true, mod+"/node")},
			map[string]string{"github.com/other/raft": shapeEtcd}, nil,
			"github.com/other/raft etcd-io/raft [github.com/other/raft]", "imported by example.com/big/node; its API looks like etcd-io/raft's", ""},
		{"nothing reached", []pkgInfo{pkg(mod+"/cmd/big", mod, true)}, nil, []string{"github.com/hashicorp/raft"}, "none", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, why, runnerUp := chooseLibrary(mod, "./cmd/big", tt.deps, tt.shapes, tt.requires)
			got := "none"
			if l != nil {
				got = l.Name + " " + l.Like + " [" + strings.Join(l.Packages, " ") + "]"
			}
			if got != tt.want || why != tt.why || runnerUp != tt.runnerUp {
				t.Errorf("chooseLibrary = %s\n  why %q\n  runner-up %q\nwant %s\n  why %q\n  runner-up %q", got, why, runnerUp, tt.want, tt.why, tt.runnerUp)
			}
		})
	}
}

// TestChooseLibraryTieByFiles: seaweedfs imports its goraft fork (one
// package of them only its protobuf subpackage) and hashicorp/raft (behind
// -raftHashicorp) from the same three packages;
// the fork, imported by more of their files, wins the tie that would
// otherwise go to the known library, and the reasons give the counts.
func TestChooseLibraryTieByFiles(t *testing.T) {
	const mod = "example.com/big"
	const forkPath, hashiPath = "github.com/acme/raft", "github.com/hashicorp/raft"
	dir := t.TempDir()
	write := func(name string, imports ...string) string {
		src := "package p\n"
		for _, imp := range imports {
			src += "import _ \"" + imp + "\"\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	server := pkg(mod+"/server", mod, true, forkPath, hashiPath)
	server.Dir, server.GoFiles = dir, []string{write("raft_server.go", forkPath), write("master.go", forkPath, hashiPath),
		write("raft_hashicorp.go", hashiPath), write("grpc.go", forkPath), write("ui.go")}
	topo := pkg(mod+"/topology", mod, true, forkPath, hashiPath)
	topo.Dir, topo.GoFiles = dir, []string{write("topology.go", forkPath, hashiPath)}
	// The command imports the fork's protobuf package, not the fork: it
	// counts for the fork all the same.
	cmd := pkg(mod+"/command", mod, true, forkPath+"/protobuf", hashiPath)
	cmd.Dir, cmd.GoFiles = dir, []string{write("command.go", forkPath+"/protobuf", hashiPath)}
	deps := []pkgInfo{pkg(forkPath, forkPath, false, forkPath+"/protobuf"), pkg(forkPath+"/protobuf", forkPath, false),
		pkg(hashiPath, hashiPath, false), server, topo, cmd,
		pkg(mod+"/cmd/big", mod, true, mod+"/server", mod+"/topology", mod+"/command")}
	l, why, runnerUp := chooseLibrary(mod, "./cmd/big", deps, map[string]string{forkPath: shapeRaft}, []string{hashiPath, forkPath})
	if l == nil || l.Name != forkPath {
		t.Fatalf("chooseLibrary = %v, want %s", l, forkPath)
	}
	if want := "imported by 3 of the module's packages (example.com/big/server, ...) in 5 files; its API is a raft's (a Raft or Node type, or AppendEntriesRequest and RequestVoteRequest)"; why != want {
		t.Errorf("why %q\nwant %q", why, want)
	}
	if want := "hashicorp/raft: imported by 3 of the module's packages (example.com/big/server, ...) in 4 files"; runnerUp != want {
		t.Errorf("runner-up %q\nwant %q", runnerUp, want)
	}
}

func TestAPIShape(t *testing.T) {
	for decls, want := range map[string]string{
		"type Raft,func NewRaft,type Config": shapeHashi,
		"type RawNode,type Ready":            shapeEtcd,
		"type Node,func StartNode":           shapeEtcd,
		"type Node,func New":                 shapeRaft,
		// goraft's forks (github.com/seaweedfs/raft): a Server interface
		// and the two RPCs' types, no Raft or Node.
		"type Server,func NewServer,type AppendEntriesRequest,type RequestVoteRequest": shapeRaft,
		"type AppendEntriesRequest": "",
		"type Store,func Open":      "",
	} {
		if got := apiShape(strings.Split(decls, ",")); got != want {
			t.Errorf("apiShape(%s) = %q, want %q", decls, got, want)
		}
	}
}

func TestNarrowPackages(t *testing.T) {
	const mod = "example.com/big"
	all := []string{mod, mod + "/cmd/big", mod + "/cmd/bigctl", mod + "/server", mod + "/storage", mod + "/storage/wal",
		mod + "/storage/wal/seg", mod + "/api/v1", mod + "/api/v2"}
	tests := []struct {
		reached []string
		want    []string
	}{
		{[]string{mod + "/cmd/big", mod + "/server", mod + "/storage", mod + "/storage/wal", mod + "/storage/wal/seg", mod + "/api/v1"},
			[]string{"./api/v1", "./cmd/big", "./server", "./storage/..."}},
		{[]string{mod + "/cmd/big", mod + "/storage/wal", mod + "/storage/wal/seg", mod + "/api/v1", mod + "/api/v2"},
			[]string{"./api/...", "./cmd/big", "./storage/wal/..."}},
		{[]string{mod}, []string{"."}},
		{all, []string{"./..."}},
	}
	for _, tt := range tests {
		if got := narrowPackages(mod, all, tt.reached); !slices.Equal(got, tt.want) {
			t.Errorf("narrowPackages(%v) = %v, want %v", tt.reached, got, tt.want)
		}
	}
}

// TestInspectFork reads testdata/bigsvc, a module shaped like the one of
// issue 44: the node program is the main named after the module (not the
// unmaintained one whose name says server), the library is the raft fork it
// reaches (not hashicorp/raft, which go.mod lists and only the unmaintained
// main imports), and the packages are the ones it reaches.
func TestInspectFork(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "bigsvc"))); err != nil {
		t.Fatal(err)
	}
	m, err := Inspect(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Guesses()
	want := []string{
		"node program ./cmd/bigsvc (named after the module, built by Dockerfile; runner-up ./unmaintained/bigsvc_servers: under unmaintained/, built by README.md, its name says server)",
		"consensus library github.com/acme/raft, a copy of hashicorp/raft (imported by github.com/acme/bigsvc/server; its API looks like hashicorp/raft's; runner-up github.com/hashicorp/raft: in go.mod, not reached from ./cmd/bigsvc)",
		"packages ./cmd/bigsvc ./server ./storage/... (the 4 of the module's 7 packages ./cmd/bigsvc reaches, and github.com/acme/raft's)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("guesses\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s := m.Starter("bigsvc", ".", "")
	if want := []string{"./cmd/bigsvc", "./server", "./storage/...", "github.com/acme/raft"}; !slices.Equal(s.Packages, want) {
		t.Errorf("target.packages %v, want %v", s.Packages, want)
	}
	if !slices.Equal(s.Ports, []string{"raft", "http"}) || s.Library != "github.com/acme/raft" {
		t.Errorf("wiring: library %q ports %v", s.Library, s.Ports)
	}
}

// TestInspectGossip reads testdata/gossipsvc, a module shaped like
// Alertmanager's: no consensus library, its state replicated over
// memberlist by ./cluster, and the node program reaching 9 of the module's
// 10 packages. init names the gossip library, and the packages are the
// ones around it (./cluster and what imports it: the replicated state;
// ./api, two imports away, is left out), not most of the module.
func TestInspectGossip(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "gossipsvc"))); err != nil {
		t.Fatal(err)
	}
	m, err := Inspect(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"node program ./cmd/gossipsvc (named after the module; runner-up ./cmd/gossipctl: its name says client or tool)",
		"consensus library: none reached; replication by gossip: hashicorp/memberlist (imported by github.com/acme/gossipsvc/cluster)",
		"packages ./cluster ./nflog ./silence (the 3 of the module's 10 packages that import hashicorp/memberlist or a package that does, of the 9 ./cmd/gossipsvc reaches, and hashicorp/memberlist's)",
	}
	if got := m.Guesses(); !slices.Equal(got, want) {
		t.Errorf("guesses\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s := m.Starter("gossipsvc", ".", "")
	if want := []string{"./cluster", "./nflog", "./silence", "github.com/hashicorp/memberlist"}; !slices.Equal(s.Packages, want) {
		t.Errorf("target.packages %v, want %v", s.Packages, want)
	}
	if !slices.Equal(s.Ports, []string{"gossip", "http"}) || s.Library != "hashicorp/memberlist" {
		t.Errorf("wiring: library %q ports %v", s.Library, s.Ports)
	}
	if c, err := config.Parse(s.YAML()); err != nil || !slices.Equal(c.Cluster.Ports, s.Ports) {
		t.Errorf("starter does not parse with the gossip wiring: %v\n%s", err, s.YAML())
	}
}

// TestInspectVendored reads testdata/vendored, whose node program uses a
// vendored copy of a raft library shaped like etcd-io/raft: go list reads
// it from vendor/, and init names it with etcd-io/raft's wiring.
func TestInspectVendored(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	t.Setenv("GOFLAGS", "-mod=vendor")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "vendored"))); err != nil {
		t.Fatal(err)
	}
	m, err := Inspect(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"node program ./cmd/node (its name says server; the only main package)",
		"consensus library github.com/other/raft, a copy of etcd-io/raft (imported by example.com/kvstore/cmd/node; its API looks like etcd-io/raft's)",
		"packages ./... (the 1 of the module's 1 packages ./cmd/node reaches, and github.com/other/raft's)",
	}
	if got := m.Guesses(); !slices.Equal(got, want) {
		t.Errorf("guesses\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s := m.Starter("kv", ".", ""); !slices.Equal(s.Packages, []string{"./...", "github.com/other/raft"}) || !slices.Equal(s.Ports, []string{"client", "peer"}) {
		t.Errorf("starter packages %v ports %v", s.Packages, s.Ports)
	}
}

// TestInspectUnloadable: a node program that does not load (its own
// package: the module that provides it is unknown) leaves the library to go.mod and the packages
// to the whole module, and says why; one whose dependency does not load (a
// package no module provides, no network) is read as far as it goes, and
// says the graph is partial.
func TestInspectUnloadable(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	t.Setenv("GOFLAGS", "-mod=readonly")
	t.Setenv("GOPROXY", "off")
	files := map[string]string{
		"go.mod":            "module example.com/kv\n\ngo 1.21\n\nrequire github.com/hashicorp/raft v1.7.0\n\nreplace github.com/hashicorp/raft => ./raft\n",
		"raft/go.mod":       "module github.com/hashicorp/raft\n\ngo 1.21\n",
		"raft/raft.go":      "package raft\n",
		"cmd/kv/main.go":    "package main\n\nimport (\n\t_ \"example.com/missing/pkg\"\n\t_ \"github.com/hashicorp/raft\"\n)\n\nfunc main() {}\n",
		"cmd/kvctl/main.go": emptyMain,
	}
	m, err := Inspect(context.Background(), module(t, files))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(m.Guesses(), "\n")
	for _, want := range []string{"node program ./cmd/kv (named after the module;",
		"consensus library hashicorp/raft (imported by example.com/kv/cmd/kv; the import graph is partial: example.com/missing/pkg does not load: ",
		"packages ./cmd/kv (the 1 of the module's 2 packages ./cmd/kv reaches, and hashicorp/raft's; the import graph is partial: "} {
		if !strings.Contains(got, want) {
			t.Errorf("dependency that does not load: guesses lack %q:\n%s", want, got)
		}
	}

	// A module nested in a required one that was never downloaded: go
	// cannot tell which module provides the node program's package.
	files["go.mod"] = "module example.com/kv\n\ngo 1.21\n\nrequire (\n\tgithub.com/hashicorp/raft v1.7.0\n\texample.com v0.1.0\n)\n\nreplace github.com/hashicorp/raft => ./raft\n"
	m, err = Inspect(context.Background(), module(t, files))
	if err != nil {
		t.Fatal(err)
	}
	got = strings.Join(m.Guesses(), "\n")
	for _, want := range []string{"consensus library hashicorp/raft (listed in go.mod (./cmd/kv does not load: ", "packages ./... (the whole module: ./cmd/kv does not load"} {
		if !strings.Contains(got, want) {
			t.Errorf("node program that does not load: guesses lack %q:\n%s", want, got)
		}
	}
}

// TestReadFromGoModLarge: when the import graph cannot be read, a module of
// many packages gets ./... with a request to narrow it.
func TestReadFromGoModLarge(t *testing.T) {
	m := &Module{Requires: []string{"github.com/hashicorp/raft"}, modulePackages: 120}
	m.readFromGoMod(errors.New("./cmd/x does not load"))
	got := strings.Join(m.Guesses(), "\n")
	if !strings.Contains(got, "packages ./... (the whole module: ./cmd/x does not load; 120 packages: narrow them to the ones the node program uses)") ||
		!strings.Contains(got, "consensus library hashicorp/raft (listed in go.mod (./cmd/x does not load))") {
		t.Errorf("guesses:\n%s", got)
	}
}

// TestAPICallers: the packages that import the library's API package are
// kept; one that imports only a subpackage (its messages) and the
// library's own packages are not, and the wider sets are named.
func TestAPICallers(t *testing.T) {
	const mod = "example.com/one"
	own := func(path string, imports ...string) pkgInfo { return pkg(path, mod, true, imports...) }
	mainPkg := func(path string, imports ...string) pkgInfo {
		p := own(path, imports...)
		p.Name = "main"
		return p
	}
	lib := func(path string, imports ...string) pkgInfo { return pkg(path, "", false, imports...) }
	etcdRaft := &Library{Name: "etcd-io/raft", Module: "go.etcd.io/raft/v3"}
	fork := &Library{Name: "example.com/raft", Module: "example.com/raft", Packages: []string{"example.com/raft"}}
	etcd := &Library{Name: "etcd", Module: "go.etcd.io/etcd/server/v3", Packages: []string{"go.etcd.io/etcd/server/v3/storage/...", "go.etcd.io/etcd/server/v3/etcdserver/..."}}
	tests := []struct {
		name     string
		lib      *Library
		deps     []pkgInfo
		want     []string
		runnerUp string
	}{
		{"etcd-io/raft: a raftpb user is left out", etcdRaft, []pkgInfo{
			mainPkg(mod, mod+"/cmd"), own(mod+"/cmd", mod+"/node", mod+"/api"),
			own(mod+"/node", "go.etcd.io/raft/v3", "go.etcd.io/raft/v3/raftpb", mod+"/wal"),
			own(mod+"/wal", "go.etcd.io/raft/v3/raftpb", "os"), own(mod+"/api", "net/http"),
			lib("go.etcd.io/raft/v3", "go.etcd.io/raft/v3/raftpb"), lib("go.etcd.io/raft/v3/raftpb"),
		}, []string{mod + "/node"}, "2 with those that import only its subpackages (example.com/one/wal); 4 on import paths from the node program to it; all 5 it reaches"},
		{"a fork and its wrapper of the messages", fork, []pkgInfo{
			mainPkg(mod, mod+"/command"), own(mod+"/command", mod+"/server", "example.com/raft/protobuf"),
			own(mod+"/server", mod+"/topology", "example.com/raft"), own(mod+"/topology", "example.com/raft"),
			lib("example.com/raft", "example.com/raft/protobuf"), lib("example.com/raft/protobuf"),
		}, []string{mod + "/server", mod + "/topology"}, "3 with those that import only its subpackages (example.com/one/command); 4 on import paths from the node program to it; all 4 it reaches"},
		{"a pattern of the library's packages", etcd, []pkgInfo{
			mainPkg(mod, mod+"/srv"), own(mod+"/srv", "go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"),
			lib("go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"),
		}, []string{mod + "/srv"}, "2 on import paths from the node program to it; all 2 it reaches"},
		{"nobody imports its API: no narrowing", fork, []pkgInfo{
			mainPkg(mod, mod+"/command"), own(mod+"/command", "example.com/raft/protobuf"),
		}, nil, ""},
	}
	for _, tc := range tests {
		reached := 0
		for _, p := range tc.deps {
			if inModule(p, mod) {
				reached++
			}
		}
		got, runnerUp := apiCallers(mod, tc.deps, tc.lib, reached)
		if !slices.Equal(got, tc.want) || runnerUp != tc.runnerUp {
			t.Errorf("%s: apiCallers = %v, %q; want %v, %q", tc.name, got, runnerUp, tc.want, tc.runnerUp)
		}
	}
}

// TestInspectOneBinary reads a module shaped like seaweedfs's (issue 44):
// one main for every command, reaching 44 of the module's packages, a
// goraft-like fork called by ./server and ./topology, and ./command, the
// subcommands' hub, importing only the fork's messages. init narrows the
// packages to the two callers of the fork's API, and names the wider sets.
func TestInspectOneBinary(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	files := map[string]string{
		"go.mod":                          "module example.com/onebin\n\ngo 1.21\n\nrequire example.com/raft v0.1.0\n\nreplace example.com/raft => ./third_party/raft\n",
		"third_party/raft/go.mod":         "module example.com/raft\n\ngo 1.21\n",
		"third_party/raft/raft.go":        "// Package raft is a goraft-like fork.\npackage raft\n\nimport _ \"example.com/raft/protobuf\"\n\n// Server is a member.\ntype Server interface{ Start() error }\n\n// AppendEntriesRequest is the replication RPC.\ntype AppendEntriesRequest struct{}\n\n// RequestVoteRequest is the election RPC.\ntype RequestVoteRequest struct{}\n",
		"third_party/raft/protobuf/pb.go": "// Package protobuf holds the fork's messages.\npackage protobuf\n\n// Entry is a log entry.\ntype Entry struct{}\n",
		"onebin/main.go":                  "package main\n\nimport \"example.com/onebin/command\"\n\nfunc main() { command.Run() }\n",
		"server/server.go":                "// Package server runs the master.\npackage server\n\nimport (\n\t_ \"example.com/onebin/storage\"\n\t_ \"example.com/onebin/topology\"\n\t_ \"example.com/raft\"\n)\n",
		"topology/topology.go":            "// Package topology keeps the cluster's layout.\npackage topology\n\nimport (\n\t_ \"example.com/onebin/storage\"\n\t_ \"example.com/raft\"\n)\n",
		"storage/storage.go":              "// Package storage keeps volumes.\npackage storage\n\nimport _ \"os\"\n",
		"unused/unused.go":                "// Package unused is not reached.\npackage unused\n",
	}
	command := "// Package command is every subcommand.\npackage command\n\nimport (\n\t_ \"example.com/onebin/server\"\n\t_ \"example.com/raft/protobuf\"\n"
	for i := range 39 {
		command += fmt.Sprintf("\t_ \"example.com/onebin/cmds/c%02d\"\n", i)
		files[fmt.Sprintf("cmds/c%02d/c.go", i)] = fmt.Sprintf("// Package c%02d is a subcommand.\npackage c%02d\n", i, i)
	}
	files["command/command.go"] = command + ")\n\n// Run runs the command line.\nfunc Run() {}\n"
	m, err := Inspect(context.Background(), module(t, files))
	if err != nil {
		t.Fatal(err)
	}
	got := m.Guesses()
	want := []string{
		"node program ./onebin (named after the module; the only main package)",
		"consensus library example.com/raft (imported by 3 of the module's packages (example.com/onebin/topology, ...); its API is a raft's (a Raft or Node type, or AppendEntriesRequest and RequestVoteRequest))",
		"packages ./server ./topology (the 2 of the module's 45 packages that import example.com/raft's API, of the 44 ./onebin reaches (over 36: one program for many commands), and example.com/raft's; " +
			"runner-up 3 with those that import only its subpackages (example.com/onebin/command); 4 on import paths from the node program to it; all 44 it reaches)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("guesses\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s := m.Starter("onebin", ".", "")
	if want := []string{"./server", "./topology", "example.com/raft"}; !slices.Equal(s.Packages, want) {
		t.Errorf("target.packages %v, want %v", s.Packages, want)
	}
}
