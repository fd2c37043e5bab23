// Package scaffold holds what "gofault init" writes for a new target: it
// reads the user's Go module (its main packages ranked as node programs by
// evidence, mains.go; what the node program's import graph reaches, the
// consensus or replication library, a fork included, and the module's own
// packages, reach.go) and turns that into a starting gofault.yaml
// (config.Starter) and a workload skeleton that compiles with the standard
// library alone.
package scaffold

import (
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/gofault/gofault/config"
)

// Module is what Inspect learnt of a Go module.
type Module struct {
	// Dir is the module's root directory, Path its module path.
	Dir  string
	Path string
	// Mains are the module's main packages, most likely node program
	// first, each with the evidence that ranked it (rankMains).
	Mains []Main
	// Library is the consensus or replication library the node program
	// reaches (a fork or vendored copy included), else the one go.mod
	// requires; nil when none is known. LibraryWhy says how it was found,
	// LibraryRunnerUp names the next candidate and why it lost ("" when
	// none).
	Library         *Library
	LibraryWhy      string
	LibraryRunnerUp string
	// Packages are the module's packages the node program reaches, as
	// patterns relative to Dir (narrowPackages); nil when its import graph
	// could not be read, PackagesWhy then says why.
	Packages    []string
	PackagesWhy string
	// PackagesRunnerUp names the wider sets a narrowed Packages left out
	// and their sizes ("" when Packages is all the node program reaches).
	PackagesRunnerUp string
	// Partial, when set, says why the node program's import graph was
	// read only in part (a dependency that does not load): the library
	// and the packages are what the rest of it says.
	Partial string
	// Requires are the module paths go.mod requires directly.
	Requires []string
	// modulePackages counts the module's packages (0: not listed).
	modulePackages int
}

// Library is a consensus or replication library gofault knows how Go
// services usually wire up.
type Library struct {
	// Name is how people call it ("hashicorp/raft"); Modules its module
	// paths (major versions, a move), the first that go.mod requires
	// directly being Module; Packages the packages worth analysing beside
	// the user's own (nil: Module's own).
	Name     string
	Modules  []string
	Module   string
	Packages []string
	// Like is, for a fork or vendored copy of a library, the library its
	// API looks like ("hashicorp/raft"); "" for the library itself.
	Like string
	// Ports, Command and Ready are the starting config's cluster section:
	// port names, an example command line (YAML list items, node templates
	// in them) and the HTTP readiness probe.
	Ports   []string
	Command []string
	Ready   string
	// Notes are comment lines for the config: what services built on it
	// usually get wrong in a test cluster.
	Notes []string
	// Gossip marks a membership and gossip library (no leader, no
	// consensus): the service replicates its state by gossip, in the
	// packages that import the library and those that import them.
	Gossip bool
}

// peers renders a --peers flag listing every node as name=host:port of
// the named port, optionally with a scheme.
func peers(flag, scheme, port string) string {
	return fmt.Sprintf(`"--%s={{range $i, $n := .Nodes}}{{if $i}},{{end}}{{$n.Name}}=%s{{$n.Host}}:{{$n.Port.%s}}{{end}}"`, flag, scheme, port)
}

// libraries are the libraries Inspect recognises, in the order it tries
// them: a service on etcd's server also requires etcd-io/raft, so etcd
// comes first.
var libraries = []Library{
	{
		Name: "hashicorp/raft", Modules: []string{"github.com/hashicorp/raft"},
		Ports: []string{"raft", "http"},
		Command: []string{`"{{.Bin}}"`, `"--id={{.Name}}"`, `"--data-dir={{.Dir}}"`,
			`"--raft-addr={{.Host}}:{{.Port.raft}}"`, `"--http-addr={{.Host}}:{{.Port.http}}"`, peers("peers", "", "raft")},
		Ready: `"http://{{.Host}}:{{.Port.http}}/health"`,
		Notes: []string{
			"hashicorp/raft: every member bootstraps the same configuration from",
			"the peer list (raft.BootstrapCluster), so a trial's cluster forms on its",
			"own; a small SnapshotThreshold and TrailingLogs make snapshots, log",
			"compaction and InstallSnapshot happen within a trial (see targets/raft).",
		},
	},
	{
		Name: "etcd", Modules: []string{"go.etcd.io/etcd/server/v3"},
		Packages: []string{"go.etcd.io/etcd/server/v3/storage/...", "go.etcd.io/etcd/server/v3/etcdserver/..."},
		Ports:    []string{"client", "peer"},
		Command: []string{`"{{.Bin}}"`, `"--name={{.Name}}"`, `"--data-dir={{.Dir}}"`,
			`"--listen-client-urls=http://{{.Host}}:{{.Port.client}}"`, `"--advertise-client-urls=http://{{.Host}}:{{.Port.client}}"`,
			`"--listen-peer-urls=http://{{.Host}}:{{.Port.peer}}"`, `"--initial-advertise-peer-urls=http://{{.Host}}:{{.Port.peer}}"`,
			`"--initial-cluster={{range $i, $n := .Nodes}}{{if $i}},{{end}}{{$n.Name}}=http://{{$n.Host}}:{{$n.Port.peer}}{{end}}"`},
		Ready: `"http://{{.Host}}:{{.Port.client}}/health"`,
		Notes: []string{"etcd (embedded): targets/etcd is a complete profile to start from."},
	},
	{
		Name: "nats-server", Modules: []string{"github.com/nats-io/nats-server/v2"},
		Packages: []string{"github.com/nats-io/nats-server/v2/server"},
		Ports:    []string{"client", "cluster", "monitor"},
		Command: []string{`"{{.Bin}}"`, `"--server_name={{.Name}}"`, `"--addr={{.Host}}"`, `"--port={{.Port.client}}"`,
			`"--http_port={{.Port.monitor}}"`, `"--jetstream"`, `"--store_dir={{.Dir}}"`, `"--cluster_name=gofault"`,
			`"--cluster=nats://{{.Host}}:{{.Port.cluster}}"`,
			`"--routes={{range $i, $n := .Nodes}}{{if $i}},{{end}}nats://{{$n.Host}}:{{$n.Port.cluster}}{{end}}"`},
		Ready: `"http://{{.Host}}:{{.Port.monitor}}/healthz"`,
		Notes: []string{
			"nats-server: its server package is one of the largest Go packages;",
			"analysing it takes a few seconds and about 1 GB (docs/targets.md).",
		},
	},
	{
		Name: "etcd-io/raft", Modules: []string{"go.etcd.io/raft/v3", "go.etcd.io/etcd/raft/v3"},
		Ports: []string{"client", "peer"},
		Command: []string{`"{{.Bin}}"`, `"--id={{.Index}}"`, `"--data-dir={{.Dir}}"`,
			`"--listen=http://{{.Host}}:{{.Port.client}}"`, peers("peers", "http://", "peer")},
		Ready: `"http://{{.Host}}:{{.Port.client}}/health"`,
		Notes: []string{
			"etcd-io/raft is a pure state machine: the faults that matter strike",
			"your own storage and transport code (./...) around its Ready loop.",
		},
	},
	{
		Name: "dragonboat", Modules: []string{"github.com/lni/dragonboat/v4", "github.com/lni/dragonboat/v3"},
		Ports: []string{"raft", "http"},
		Command: []string{`"{{.Bin}}"`, `"--replica-id={{.Index}}"`, `"--data-dir={{.Dir}}"`,
			`"--raft-addr={{.Host}}:{{.Port.raft}}"`, `"--http-addr={{.Host}}:{{.Port.http}}"`, peers("peers", "", "raft")},
		Ready: `"http://{{.Host}}:{{.Port.http}}/health"`,
	},
}

// gossipLibraries are the membership and gossip libraries Inspect
// recognises when the node program reaches no consensus library, in the
// order it tries them: a serf service reaches memberlist through serf.
var gossipLibraries = []Library{
	gossip("hashicorp/serf", "github.com/hashicorp/serf", "github.com/hashicorp/serf/serf"),
	gossip("hashicorp/memberlist", "github.com/hashicorp/memberlist", "github.com/hashicorp/memberlist"),
}

// gossip is a gossip library's entry: its wiring is a gossip port, an
// HTTP port and the list of members to join.
func gossip(name, module, pkg string) Library {
	return Library{
		Name: name, Modules: []string{module}, Packages: []string{pkg}, Gossip: true,
		Ports: []string{"gossip", "http"},
		Command: []string{`"{{.Bin}}"`, `"--name={{.Name}}"`, `"--data-dir={{.Dir}}"`,
			`"--gossip-addr={{.Host}}:{{.Port.gossip}}"`, `"--http-addr={{.Host}}:{{.Port.http}}"`,
			`"--join={{range $i, $n := .Nodes}}{{if $i}},{{end}}{{$n.Host}}:{{$n.Port.gossip}}{{end}}"`},
		Ready: `"http://{{.Host}}:{{.Port.http}}/health"`,
		Notes: []string{
			name + ": gossip, no leader and no consensus: a broadcast is best-effort",
			"(UDP) and the periodic push/pull of the full state heals what it lost;",
			"a push/pull interval of a few seconds lets that happen within a trial.",
		},
	}
}

// companions are stores that services put beside a library, analysed with it.
var companions = map[string][]string{
	"github.com/hashicorp/raft": {"github.com/hashicorp/raft-boltdb", "github.com/hashicorp/raft-boltdb/v2", "github.com/hashicorp/raft-wal"},
}

// Inspect reads the Go module holding dir (dir or its nearest parent with
// a go.mod): its path and requirements, its main packages ranked as node
// programs by evidence (rankMains, buildEvidence), and what the first one
// reaches (go list -deps): the consensus library and the module's own
// packages. Without a Go toolchain, or when go list fails, the mains are
// unknown and the library is the one go.mod requires. It fails only when
// no go.mod is found or it does not parse.
func Inspect(ctx context.Context, dir string) (*Module, error) {
	modDir, err := findModule(dir)
	if err != nil {
		return nil, err
	}
	gomod := filepath.Join(modDir, "go.mod")
	data, err := os.ReadFile(gomod)
	if err != nil {
		return nil, fmt.Errorf("inspect module: %w", err)
	}
	f, err := modfile.ParseLax(gomod, data, nil)
	if err != nil {
		return nil, fmt.Errorf("inspect module: %w", err)
	}
	m := &Module{Dir: modDir}
	if f.Module != nil {
		m.Path = f.Module.Mod.Path
	}
	for _, r := range f.Require {
		if !r.Indirect { // what the service itself imports
			m.Requires = append(m.Requires, r.Mod.Path)
		}
	}
	all, err := goList(ctx, modDir, "./...")
	if err != nil {
		m.readFromGoMod(err)
		return m, nil
	}
	var mains, paths []string
	for _, p := range all {
		if !inModule(p, m.Path) {
			continue
		}
		paths = append(paths, p.ImportPath)
		if p.Name == "" { // it did not load (a dependency not downloaded): its files still say
			p.Name = packageName(filepath.Join(modDir, filepath.FromSlash(strings.TrimPrefix(relPkg(m.Path, p.ImportPath), "./"))))
		}
		if p.Name == "main" {
			mains = append(mains, relPkg(m.Path, p.ImportPath))
		}
	}
	m.modulePackages = len(paths)
	m.Mains = rankMains(m.Path, mains, buildEvidence(modDir, m.Path, mains))
	if len(m.Mains) == 0 {
		m.readFromGoMod(errors.New("the module has no main package"))
		return m, nil
	}
	main := m.Mains[0].Path
	deps, err := goList(ctx, modDir, "-deps", main)
	var partial error
	if err == nil {
		err, partial = loadErrors(deps, m.Path, main)
	}
	if err != nil {
		m.readFromGoMod(err)
		return m, nil
	}
	m.Library, m.LibraryWhy, m.LibraryRunnerUp = chooseLibrary(m.Path, main, deps, raftShapes(deps), m.Requires)
	var around []string // the packages around a gossip library
	if m.Library == nil {
		m.Library, m.LibraryWhy, around = chooseGossip(m.Path, deps)
	}
	if m.Library == nil {
		m.Library = libraryOf(m.Requires)
		if m.Library != nil {
			m.LibraryWhy = "listed in go.mod, though " + main + " does not import it"
		}
	}
	var reached []string
	for _, p := range deps {
		if inModule(p, m.Path) {
			reached = append(reached, p.ImportPath)
		}
	}
	m.Packages = narrowPackages(m.Path, paths, reached)
	m.PackagesWhy = fmt.Sprintf("the %d of the module's %d packages %s reaches", len(reached), len(paths), main)
	if l := m.Library; l != nil && !l.Gossip && len(reached) > manyPackages {
		if core, wider := apiCallers(m.Path, deps, l, len(reached)); core != nil {
			m.Packages = narrowPackages(m.Path, paths, core)
			m.PackagesWhy = fmt.Sprintf("the %d of the module's %d packages that import %s's API, of the %d %s reaches (over %d: one program for many commands)",
				len(core), len(paths), l.Name, len(reached), main, manyPackages)
			m.PackagesRunnerUp = wider
		}
	}
	if around != nil {
		m.Packages = narrowPackages(m.Path, paths, around)
		m.PackagesWhy = fmt.Sprintf("the %d of the module's %d packages that import %s or a package that does, of the %d %s reaches",
			len(around), len(paths), m.Library.Name, len(reached), main)
	}
	if partial != nil {
		m.Partial = partial.Error()
	}
	return m, nil
}

// loadErrors are why main's import graph in deps is not whole: main's own
// error (its imports are unknown: nothing can be read from deps), and the
// first package that does not load among the others (a dependency not
// downloaded, a replacement directory missing: the graph beyond it is
// unknown).
func loadErrors(deps []pkgInfo, modPath, main string) (own, other error) {
	for _, p := range deps {
		if p.Error == nil {
			continue
		}
		msg := clip(strings.Join(strings.Fields(p.Error.Err), " "), 160)
		if inModule(p, modPath) && relPkg(modPath, p.ImportPath) == main {
			own = fmt.Errorf("%s does not load: %s", main, msg)
		} else if other == nil {
			other = fmt.Errorf("%s does not load: %s", p.ImportPath, msg)
		}
	}
	return own, other
}

// readFromGoMod is Inspect's fallback when the module's packages could
// not be listed (why): the library is the one go.mod requires and the
// packages are the whole module's.
func (m *Module) readFromGoMod(why error) {
	m.Library = libraryOf(m.Requires)
	if m.Library != nil {
		m.LibraryWhy = "listed in go.mod (" + why.Error() + ")"
	}
	m.PackagesWhy = why.Error()
	if m.modulePackages > manyPackages {
		m.PackagesWhy += fmt.Sprintf("; %d packages: narrow them to the ones the node program uses", m.modulePackages)
	}
}

// manyPackages is the size of a module whose whole analysis is slow
// enough that init asks for a narrower target.packages.
const manyPackages = 36

// packageName is the package clause of the first Go file in dir that has
// one, "" when none does.
func packageName(dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, n), nil, parser.PackageClauseOnly)
		if err == nil {
			return f.Name.Name
		}
	}
	return ""
}

// relPkg is the module package importPath relative to the module modPath:
// "./cmd/kv", or "." for the module's root package.
func relPkg(modPath, importPath string) string {
	if importPath == modPath {
		return "."
	}
	return "./" + strings.TrimPrefix(importPath, modPath+"/")
}

// findModule returns dir or its nearest parent holding a go.mod.
func findModule(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("inspect module: %w", err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or its parents: run gofault init in your service's Go module", abs)
		}
	}
}

// libraryOf is the first known library among requires, with the
// companion stores the module also requires.
func libraryOf(requires []string) *Library {
	for _, l := range libraries {
		i := slices.IndexFunc(l.Modules, func(m string) bool { return slices.Contains(requires, m) })
		if i < 0 {
			continue
		}
		lib := l
		lib.Module = l.Modules[i]
		lib.Packages = slices.Clone(l.Packages)
		if lib.Packages == nil {
			lib.Packages = []string{lib.Module}
		}
		for _, c := range companions[lib.Module] {
			if slices.Contains(requires, c) {
				lib.Packages = append(lib.Packages, c)
			}
		}
		return &lib
	}
	return nil
}

// Starter is the starting config for m: its main package (the most likely
// one; the others in a comment), the module's packages it reaches (all of
// them, ./..., when that is unknown) and its library's, and the library's
// cluster wiring. relModule is target.module as seen from the config
// file's directory; workload is workload.package ("" when no skeleton was
// written).
func (m *Module) Starter(name, relModule, workload string) config.Starter {
	s := config.Starter{Name: name, Module: relModule, Workload: workload, Packages: slices.Clone(m.Packages)}
	if len(s.Packages) == 0 {
		s.Packages = []string{"./..."}
	}
	var ms []string
	for _, p := range m.Mains {
		if workload == "" || !samePkg(p.Path, workload) {
			ms = append(ms, p.Path)
		}
	}
	if len(ms) > 0 {
		s.Main, s.OtherMains = ms[0], ms[1:]
	}
	s.Read = m.Guesses()
	if l := m.Library; l != nil {
		s.Library = l.Name
		s.LibraryNotes = l.Notes
		for _, p := range l.Packages {
			if !slices.Contains(s.Packages, p) {
				s.Packages = append(s.Packages, p)
			}
		}
		s.Ports, s.Command = l.Ports, l.Command
		s.ReadyTCP = `"{{.Host}}:{{.Port.` + l.Ports[len(l.Ports)-1] + `}}"`
		s.ReadyHTTP = l.Ready
	}
	return s
}

// samePkg reports whether two relative package paths name the same
// package ("./workload", "workload/").
func samePkg(a, b string) bool {
	return path.Clean("./"+a) == path.Clean("./"+b)
}

// Guesses are the lines Init prints about m: each guess (node program,
// consensus library, packages) with why, and the runner-up with why it
// lost.
func (m *Module) Guesses() []string {
	var out []string
	partial := ""
	if m.Partial != "" {
		partial = "; the import graph is partial: " + m.Partial
	}
	switch len(m.Mains) {
	case 0:
		out = append(out, "node program: none found (set target.main)")
	case 1:
		out = append(out, fmt.Sprintf("node program %s (%s; the only main package)", m.Mains[0].Path, m.Mains[0].Reason()))
	default:
		out = append(out, fmt.Sprintf("node program %s (%s; runner-up %s: %s)", m.Mains[0].Path, m.Mains[0].Reason(), m.Mains[1].Path, m.Mains[1].Reason()))
	}
	if l := m.Library; l != nil && l.Gossip {
		out = append(out, "consensus library: none reached; replication by gossip: "+l.Name+" ("+m.LibraryWhy+partial+")")
	} else if l != nil {
		line := "consensus library " + l.Name
		if l.Like != "" {
			line += ", a copy of " + l.Like
		}
		line += " (" + m.LibraryWhy
		if m.LibraryRunnerUp != "" {
			line += "; runner-up " + m.LibraryRunnerUp
		}
		out = append(out, line+partial+")")
	} else {
		out = append(out, "consensus library: none known reached (add its packages to target.packages)")
	}
	if m.Packages != nil {
		const most = 12
		pats := m.Packages
		more := ""
		if len(pats) > most {
			pats, more = pats[:most], fmt.Sprintf(" and %d more", len(pats)-most)
		}
		lib := ""
		if m.Library != nil {
			lib = ", and " + m.Library.Name + "'s"
		}
		runnerUp := ""
		if m.PackagesRunnerUp != "" {
			runnerUp = "; runner-up " + m.PackagesRunnerUp
		}
		out = append(out, fmt.Sprintf("packages %s%s (%s%s%s%s)", strings.Join(pats, " "), more, m.PackagesWhy, lib, runnerUp, partial))
	} else {
		out = append(out, fmt.Sprintf("packages ./... (the whole module: %s)", m.PackagesWhy))
	}
	return out
}
