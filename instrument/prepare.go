package instrument

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/gofault/gofault/agent"
	"github.com/gofault/gofault/procgroup"
)

// AgentModule is the module path of the agent that instrumented code imports.
const AgentModule = "github.com/gofault/gofault/agent"

// Work is a prepared work directory: a modfile that requires and replaces
// the agent and the copied dependency modules, and the environment every go
// command of the build runs with. All paths are absolute.
type Work struct {
	// Dir is the work directory, e.g. <config dir>/.gofault/build.
	Dir string
	// ModuleDir is the user's main module directory; go commands run there.
	ModuleDir string
	// ModFile is the work copy of the user's go.mod (its go.sum sits next to it).
	ModFile string
	// AgentDir holds the agent module's source written from agent.Source.
	AgentDir string
	// Copies are the dependency modules copied into the work dir because
	// target packages live in them.
	Copies []ModuleCopy
	// Patterns are the target package patterns (Target.Packages).
	Patterns []string
	// Main is the main package to build, relative to ModuleDir.
	Main string
	// Test is Target.Test.
	Test bool
	// BuildFlags are the user's extra go build flags.
	BuildFlags []string
	// Env is the environment of the go commands (os.Environ plus GOWORK=off
	// and GOFLAGS without -mod).
	Env []string
	// Workspace is the go.work file the user's go commands use in
	// ModuleDir ("" for none): its modules are replaced in ModFile
	// (workspace.go).
	Workspace string
	// Role is Target.Role.
	Role string
	// Member is Target.Member.
	Member string
	// Transport is Target.Transport.
	Transport Transport
	// Setup is Target.Setup.
	Setup []string
	// PeerPackages is Target.PeerPackages.
	PeerPackages []string
	// NoCoverage is Target.NoCoverage.
	NoCoverage bool
	// ObserveSend and ObserveHandled are Target's.
	ObserveSend, ObserveHandled []string
}

// ModuleCopy is a dependency module copied out of the module cache.
type ModuleCopy struct {
	Path    string // module path
	Version string
	Orig    string // directory in GOMODCACHE
	Dir     string // the writable copy in the work dir
}

// GoFlags returns the flags that point a go command at the work modfile:
// -modfile and -mod=mod (the work modfile and its go.sum belong to gofault,
// so the go command may update them).
func (w *Work) GoFlags() []string {
	return []string{"-modfile=" + w.ModFile, "-mod=mod"}
}

// AllBuildFlags returns the flags every go command of the build uses: the
// work modfile flags followed by the user's build flags.
func (w *Work) AllBuildFlags() []string {
	return append(w.GoFlags(), w.BuildFlags...)
}

// OrigPath maps a file in a module copy back to the file it was copied from
// in the module cache; other paths are returned unchanged.
func (w *Work) OrigPath(file string) string {
	for _, c := range w.Copies {
		if rel, ok := within(c.Dir, file); ok {
			return filepath.Join(c.Orig, rel)
		}
	}
	return file
}

// lineFiles returns, for every Go file that a build may compile from the
// module copies, its content behind a //line directive naming the file it
// was copied from. Built through the overlay, every position in the copies
// (stack traces, panics, compiler errors) names the module cache file, as
// in a build of the original module, and instrumented and plain builds name
// the same files. Test files, testdata, and cgo files are left alone.
func (w *Work) lineFiles() (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, c := range w.Copies {
		err := filepath.WalkDir(c.Dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if path != c.Dir && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(data, []byte(`import "C"`)) {
				return nil
			}
			data = bytes.TrimPrefix(data, []byte("\ufeff")) // a BOM is only allowed first
			rel, _ := filepath.Rel(c.Dir, path)
			files[path] = append([]byte("//line "+filepath.Join(c.Orig, rel)+":1\n"), data...)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("module copy %s: %w", c.Path, err)
		}
	}
	return files, nil
}

// CopyPath maps a file in the module cache to the same file in the work
// dir's copy of its module; other paths are returned unchanged. It lets a
// catalog made by analysing the module cache (e.g. gofault analyze) be used
// for a build.
func (w *Work) CopyPath(file string) string {
	for _, c := range w.Copies {
		if rel, ok := within(c.Orig, file); ok {
			return filepath.Join(c.Dir, rel)
		}
	}
	return file
}

// within reports whether file lies under dir and returns its relative path.
func within(dir, file string) (string, bool) {
	rel, err := filepath.Rel(dir, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// Target is what Prepare needs to know of a target: its main module, the
// packages to instrument and the release to build.
type Target struct {
	// Module is the user's main module directory.
	Module string
	// Main is the main package to build, relative to Module (default ".").
	Main string
	// Test builds Main's test binary (go test -c) instead of a program:
	// Main is then the package under test (gofault test).
	Test bool `json:",omitempty"`
	// Packages are the package patterns to instrument.
	Packages []string
	// BuildFlags are extra go build flags, e.g. "-tags=foo".
	BuildFlags []string
	// Version, if set, is the release of the modules of Versioned to
	// build (e.g. "v3.5.16"): the work go.mod is then that release's own
	// dependency graph, not the user's go.mod (release.go).
	Version   string
	Versioned []string
	// WorkDir is the build work directory, e.g. <config dir>/.gofault/build.
	WorkDir string
	// Role overrides the analysis's choice of the node's role field
	// ("pkg/path.Type.field", or "none"); empty lets it choose.
	Role string `json:",omitempty"`
	// Member names the field that tells the members of an in-process
	// cluster apart, "pkg/path.Type.field" (gofault test's test.member):
	// every method of Type then tags the goroutine running it with its
	// receiver's field while it runs (agent.MemberEnter). Empty: none.
	Member string `json:",omitempty"`
	// Transport names the sends of the in-process transport between the
	// members (gofault test's test.transport; needs Member): each gets a
	// fault site where a cut between two members fails it (send.go).
	Transport Transport `json:",omitempty"`
	// Setup names the test setup functions of a test build (gofault
	// test's test.setup): patterns, as path.Match takes them, of the
	// functions ("createJetStreamCluster*") and methods ("cluster.restart*",
	// receiver type and name) declared in the package's _test.go files.
	// Each gets agent.SetupEnter and a deferred agent.SetupExit at its
	// entry: while one runs, no fault strikes the process (setup.go).
	Setup []string `json:",omitempty"`
	// PeerPackages name the peer-transport packages whose network calls a
	// partition cuts (analysis.Options.PeerPackages); empty lets the
	// analysis use its default.
	PeerPackages []string `json:",omitempty"`
	// NoCoverage leaves out the coverage counters that Build otherwise
	// puts at the start of every basic block of the target packages
	// (blockEdits; a build with -race never has them).
	NoCoverage bool `json:",omitempty"`
	// ObserveSend and ObserveHandled name observation points by function
	// (analysis.Options.ObserveSend, ObserveHandled).
	ObserveSend    []string `json:",omitempty"`
	ObserveHandled []string `json:",omitempty"`
}

// Prepare sets up the work directory of t: it writes the agent module,
// copies the user's go.mod and go.sum (absolute replace paths, the agent
// required and replaced) or, with a target version, resolves that
// release's own go.mod and go.sum (release.go), copies the dependency
// modules that hold target packages out of the module cache and replaces
// them with the copies. Neither the user's tree nor the module cache is
// modified.
func Prepare(ctx context.Context, t Target) (*Work, error) {
	modDir, err := filepath.Abs(t.Module)
	if err != nil {
		return nil, fmt.Errorf("target module: %w", err)
	}
	if _, err := os.Stat(filepath.Join(modDir, "go.mod")); err != nil {
		return nil, fmt.Errorf("target module %s: %w", modDir, err)
	}
	if t.WorkDir == "" {
		return nil, errors.New("prepare: no work dir")
	}
	dir, err := filepath.Abs(t.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	main := t.Main
	if main == "" {
		main = "."
	}
	w := &Work{
		Dir:        dir,
		ModuleDir:  modDir,
		ModFile:    filepath.Join(dir, "go.mod"),
		AgentDir:   filepath.Join(dir, "agent"),
		Patterns:   t.Packages,
		Main:       main,
		Test:       t.Test,
		BuildFlags: t.BuildFlags,
		Env:        goEnv(os.Environ()),
		Role:       t.Role,
		Member:     t.Member,
		Transport:  t.Transport,
		Setup:      t.Setup,

		PeerPackages:   t.PeerPackages,
		ObserveSend:    t.ObserveSend,
		ObserveHandled: t.ObserveHandled,
		NoCoverage:     t.NoCoverage,
	}
	if err := writeAgent(w.AgentDir); err != nil {
		return nil, err
	}
	// 1. The user's go.mod and go.sum, with absolute replace paths and the
	// target version applied.
	data, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("read go.mod: %w", err)
	}
	sum, err := os.ReadFile(filepath.Join(modDir, "go.sum"))
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("read go.sum: %w", err)
	}
	mf, err := workModFile(data, modDir)
	if err != nil {
		return nil, err
	}
	// The workspace the user's go commands would use, written into the
	// work go.mod (workspace.go).
	if w.Workspace, err = workspaceFile(ctx, modDir, os.Environ()); err != nil {
		return nil, err
	}
	if w.Workspace != "" {
		wdata, err := os.ReadFile(w.Workspace)
		if err != nil {
			return nil, fmt.Errorf("read workspace: %w", err)
		}
		repl, sums, err := workspaceReplacements(w.Workspace, wdata, modDir, modulePathOf)
		if err != nil {
			return nil, err
		}
		if mf, err = applyWorkspace(mf, w.ModFile, repl); err != nil {
			return nil, err
		}
		if sum, err = mergeSums(sum, sums); err != nil {
			return nil, err
		}
		var mods []string
		for _, r := range repl {
			mods = append(mods, r.Path+" => "+r.NewPath)
		}
		slog.Info("the build follows the target's Go workspace (the agent stays gofault's own)", "go.work", w.Workspace, "replaced", mods)
	}
	if err := os.WriteFile(w.ModFile, mf, 0o644); err != nil {
		return nil, fmt.Errorf("write work go.mod: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		return nil, fmt.Errorf("write work go.sum: %w", err)
	}
	if t.Version != "" && len(t.Versioned) > 0 {
		// The release's own dependency graph, not the user's pins
		// (release.go).
		if err := w.resolveRelease(ctx, t, mf, Floors); err != nil {
			return nil, err
		}
	}
	// 2. The modules that hold target packages.
	if len(w.Patterns) > 0 {
		mods, err := w.targetModules(ctx)
		if err != nil {
			return nil, err
		}
		for _, m := range mods {
			c, err := copyModule(m, filepath.Join(dir, "mod"))
			if err != nil {
				return nil, err
			}
			w.Copies = append(w.Copies, c)
		}
	}
	// 3. The agent and the copies, required and replaced.
	data, err = os.ReadFile(w.ModFile)
	if err != nil {
		return nil, fmt.Errorf("read work go.mod: %w", err)
	}
	repl := map[string]string{AgentModule: w.AgentDir}
	for _, c := range w.Copies {
		repl[c.Path] = c.Dir
	}
	mf, err = addReplacements(data, w.ModFile, repl)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(w.ModFile, mf, 0o644); err != nil {
		return nil, fmt.Errorf("write work go.mod: %w", err)
	}
	slog.Debug("work dir prepared", "dir", dir, "copies", len(w.Copies))
	return w, nil
}

// goEnv returns env with GOWORK=off (-modfile does not work in workspace
// mode) and any -mod flag removed from GOFLAGS (gofault passes its own).
func goEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "GOWORK="):
			continue
		case strings.HasPrefix(kv, "GOFLAGS="):
			var keep []string
			for _, f := range strings.Fields(strings.TrimPrefix(kv, "GOFLAGS=")) {
				if !strings.HasPrefix(f, "-mod=") && !strings.HasPrefix(f, "-modfile=") {
					keep = append(keep, f)
				}
			}
			kv = "GOFLAGS=" + strings.Join(keep, " ")
		}
		out = append(out, kv)
	}
	return append(out, "GOWORK=off")
}

// goCmd runs the go command in the user's module dir with the work env and
// returns its standard output.
func (w *Work) goCmd(ctx context.Context, args ...string) ([]byte, error) {
	cmd := procgroup.Command(ctx, "go", args...)
	cmd.Dir = w.ModuleDir
	cmd.Env = w.Env
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	slog.Debug("run", "cmd", "go "+strings.Join(args, " "), "dir", w.ModuleDir)
	if err := procgroup.Run(cmd); err != nil {
		return stdout.Bytes(), fmt.Errorf("go %s: %w\n%s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// listedModule is the part of `go list -json` output Prepare needs.
type listedModule struct {
	Path    string
	Version string
	Dir     string
	Main    bool
	Replace *listedModule
}

// targetModules lists the target packages and returns the modules in the
// module cache that hold some of them. Packages of the main module or of
// modules replaced by local directories are rewritten through the overlay
// and need no copy.
func (w *Work) targetModules(ctx context.Context) ([]listedModule, error) {
	args := append([]string{"list", "-e", "-json=ImportPath,Module"}, w.GoFlags()...)
	args = append(args, w.BuildFlags...)
	args = append(args, w.Patterns...)
	out, err := w.goCmd(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("list target packages: %w", err)
	}
	cache := goModCache(ctx, w.Env)
	seen := map[string]listedModule{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Module     *listedModule
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		m := p.Module
		if m == nil || m.Main {
			continue
		}
		if m.Replace != nil {
			if m.Replace.Version == "" { // local directory
				continue
			}
			m = &listedModule{Path: m.Path, Version: m.Replace.Version, Dir: m.Replace.Dir}
		}
		if m.Dir == "" {
			return nil, fmt.Errorf("module %s@%s of %s is not downloaded", m.Path, m.Version, p.ImportPath)
		}
		if _, ok := within(cache, m.Dir); !ok {
			continue
		}
		seen[m.Path] = *m
	}
	mods := make([]listedModule, 0, len(seen))
	for _, m := range seen {
		mods = append(mods, m)
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	return mods, nil
}

// goModCache returns GOMODCACHE as the go command sees it.
func goModCache(ctx context.Context, env []string) string {
	cmd := procgroup.Command(ctx, "go", "env", "GOMODCACHE")
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := procgroup.Run(cmd); err != nil {
		return filepath.Join(os.Getenv("HOME"), "go", "pkg", "mod")
	}
	return strings.TrimSpace(out.String())
}

// copyModule copies module m into root/<escaped path>@<version> with
// writable files, unless a complete copy is already there.
func copyModule(m listedModule, root string) (ModuleCopy, error) {
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return ModuleCopy{}, fmt.Errorf("copy module %s: %w", m.Path, err)
	}
	dst := filepath.Join(root, filepath.FromSlash(esc)+"@"+m.Version)
	c := ModuleCopy{Path: m.Path, Version: m.Version, Orig: m.Dir, Dir: dst}
	done := filepath.Join(dst, ".gofault-copied")
	if _, err := os.Stat(done); err == nil {
		return c, synthesizeModFile(c)
	}
	if err := os.RemoveAll(dst); err != nil {
		return c, fmt.Errorf("copy module %s: %w", m.Path, err)
	}
	err = filepath.WalkDir(m.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(m.Dir, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return copyFile(path, target)
	})
	if err != nil {
		return c, fmt.Errorf("copy module %s@%s: %w", m.Path, m.Version, err)
	}
	if err := synthesizeModFile(c); err != nil {
		return c, err
	}
	if err := os.WriteFile(done, []byte(m.Dir+"\n"), 0o644); err != nil {
		return c, fmt.Errorf("copy module %s: %w", m.Path, err)
	}
	return c, nil
}

// synthesizeModFile gives the copy c of a module that has no go.mod (one
// published before modules, such as github.com/boltdb/bolt v1.3.1) the
// go.mod the go command synthesizes for it in the module cache, a module
// line alone: a replacement directory must have one.
func synthesizeModFile(c ModuleCopy) error {
	name := filepath.Join(c.Dir, "go.mod")
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	if err := os.WriteFile(name, []byte("module "+modfile.AutoQuote(c.Path)+"\n"), 0o644); err != nil {
		return fmt.Errorf("copy module %s: synthesize go.mod: %w", c.Path, err)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeAgent writes the agent module's embedded source (without tests) to dir.
func writeAgent(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("write agent: %w", err)
	}
	err := fs.WalkDir(agent.Source, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := fs.ReadFile(agent.Source, path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return fmt.Errorf("write agent: %w", err)
	}
	return nil
}

// workModFile returns the user's go.mod data (from module dir modDir) with
// relative replace paths made absolute.
func workModFile(data []byte, modDir string) ([]byte, error) {
	f, err := modfile.Parse(filepath.Join(modDir, "go.mod"), data, nil)
	if err != nil {
		return nil, fmt.Errorf("parse go.mod: %w", err)
	}
	for _, r := range f.Replace {
		if r.New.Version != "" || filepath.IsAbs(r.New.Path) {
			continue
		}
		abs := filepath.Join(modDir, r.New.Path)
		if err := f.AddReplace(r.Old.Path, r.Old.Version, abs, ""); err != nil {
			return nil, fmt.Errorf("go.mod replace %s: %w", r.Old.Path, err)
		}
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return nil, fmt.Errorf("format go.mod: %w", err)
	}
	return out, nil
}

// addReplacements requires each module of repl at v0.0.0 if it is not
// required yet and replaces it (all versions) with the directory repl maps
// it to, dropping earlier replacements of the same module.
func addReplacements(data []byte, name string, repl map[string]string) ([]byte, error) {
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("parse work go.mod: %w", err)
	}
	required := map[string]bool{}
	for _, r := range f.Require {
		required[r.Mod.Path] = true
	}
	paths := make([]string, 0, len(repl))
	for p := range repl {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for _, r := range f.Replace {
			if r.Old.Path == p {
				if err := f.DropReplace(p, r.Old.Version); err != nil {
					return nil, fmt.Errorf("drop replace %s: %w", p, err)
				}
			}
		}
		if !required[p] {
			if err := f.AddRequire(p, "v0.0.0"); err != nil {
				return nil, fmt.Errorf("require %s: %w", p, err)
			}
		}
		if err := f.AddReplace(p, "", repl[p], ""); err != nil {
			return nil, fmt.Errorf("replace %s: %w", p, err)
		}
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return nil, fmt.Errorf("format work go.mod: %w", err)
	}
	return out, nil
}
