package instrument

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// A build of a release (Target.Version) uses that release's own dependency
// graph, not the user's go.mod pins, which may be far newer than the
// release compiles with. Its work go.mod requires only
//
//   - every versioned module at Version, with the requirement graph of
//     their go.mod files at that version (MVS: what go get gives an empty
//     module);
//   - for each module that provides a package imported by a main-module
//     package of the build and is not in that graph, the user's
//     requirement of it;
//   - floors raised: a module of the graph below its Floor gets the
//     floor's version.
//
// The user's other requirements (newer pins, modules only its other
// programs use, such as the workload's) are not in it.

// A Floor is the lowest version of a module that still works when built
// with the current Go toolchain. A release's dependency graph that holds
// the module at a lower version gets exactly this version instead (and
// whatever MVS moves with it): the release built as its authors would
// build it today.
type Floor struct {
	Path, Version string
	// Why says what goes wrong below Version.
	Why string
}

// Floors are the modules whose old versions compile but fail at run time
// with the Go toolchains gofault supports (docs/build.md lists them too).
var Floors = []Floor{
	{"github.com/modern-go/reflect2", "v1.0.2",
		"v1.0.1 (json-iterator's reflection, e.g. in etcd's client/v2) links to the runtime's map iterator with a pre-Go 1.18 layout: encoding any map segfaults in reflect.mapiternext on Go ≥ 1.18"},
}

// releaseModFile is the go.mod a release's resolution starts from: the
// module path, go and toolchain lines, excludes and replace directives of
// user, the user's go.mod (absolute replace paths), without replacements
// of the versioned modules, and no requirements at all.
func releaseModFile(user []byte, versioned []string) ([]byte, error) {
	f, err := modfile.Parse("go.mod", user, nil)
	if err != nil {
		return nil, fmt.Errorf("parse go.mod: %w", err)
	}
	if f.Module == nil {
		return nil, errors.New("go.mod has no module line")
	}
	isVersioned := map[string]bool{}
	for _, m := range versioned {
		isVersioned[m] = true
	}
	var out modfile.File
	out.AddModuleStmt(f.Module.Mod.Path)
	if f.Go != nil {
		if err := out.AddGoStmt(f.Go.Version); err != nil {
			return nil, fmt.Errorf("go.mod go line: %w", err)
		}
	}
	if f.Toolchain != nil {
		if err := out.AddToolchainStmt(f.Toolchain.Name); err != nil {
			return nil, fmt.Errorf("go.mod toolchain line: %w", err)
		}
	}
	for _, x := range f.Exclude {
		if err := out.AddExclude(x.Mod.Path, x.Mod.Version); err != nil {
			return nil, fmt.Errorf("go.mod exclude %s: %w", x.Mod.Path, err)
		}
	}
	for _, r := range f.Replace {
		if isVersioned[r.Old.Path] {
			continue
		}
		if err := out.AddReplace(r.Old.Path, r.Old.Version, r.New.Path, r.New.Version); err != nil {
			return nil, fmt.Errorf("go.mod replace %s: %w", r.Old.Path, err)
		}
	}
	out.Cleanup()
	return out.Format()
}

// extraModules returns, as path@version, the user's requirement of each
// module (other than versioned ones) that provides a package imported by a
// main-module package that the build of main and patterns compiles, read
// from go list -deps with the work go.mod while it is still the copy of
// the user's.
func (w *Work) extraModules(ctx context.Context, versioned []string) ([]string, error) {
	args := append([]string{"list", "-e", "-deps", "-json=ImportPath,Imports,Module,Standard"}, w.GoFlags()...)
	args = append(args, w.BuildFlags...)
	args = append(args, w.Main)
	out, err := w.goCmd(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("list main package: %w", err)
	}
	type pkg struct {
		ImportPath string
		Imports    []string
		Standard   bool
		Module     *listedModule
	}
	pkgs := map[string]pkg{}
	var order []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs[p.ImportPath] = p
		order = append(order, p)
	}
	skip := map[string]bool{AgentModule: true}
	for _, m := range versioned {
		skip[m] = true
	}
	set := map[string]bool{}
	for _, p := range order {
		if p.Module == nil || !p.Module.Main {
			continue
		}
		for _, imp := range p.Imports {
			d, ok := pkgs[imp]
			if !ok || d.Standard || d.Module == nil || d.Module.Main || skip[d.Module.Path] {
				continue
			}
			set[d.Module.Path+"@"+d.Module.Version] = true
		}
	}
	mods := make([]string, 0, len(set))
	for m := range set {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	return mods, nil
}

// resolveRelease writes the work go.mod and go.sum of t's release (see
// the top of this file) from user, the user's go.mod with absolute replace
// paths, which the work go.mod is a copy of when it is called. The result
// is kept in <work>/release/<key>.{mod,sum}, keyed by everything it is
// resolved from, so that later builds of the same release need no go get
// (which asks the module proxy and the checksum database); the go.sum
// lines come from go get and go list -mod=mod, so they are checked against
// the checksum database like any other.
func (w *Work) resolveRelease(ctx context.Context, t Target, user []byte, floors []Floor) error {
	extra, err := w.extraModules(ctx, t.Versioned)
	if err != nil {
		return err
	}
	base, err := releaseModFile(user, t.Versioned)
	if err != nil {
		return err
	}
	versioned := append([]string(nil), t.Versioned...)
	sort.Strings(versioned)
	h := sha256.New()
	fmt.Fprintf(h, "gofault release 1\nversion %s\nversioned %q\nextra %q\nfloors %q\n%s", t.Version, versioned, extra, floors, base)
	kept := filepath.Join(w.Dir, "release", hex.EncodeToString(h.Sum(nil))[:24])
	sum := strings.TrimSuffix(w.ModFile, ".mod") + ".sum"
	if copyFile(kept+".mod", w.ModFile) == nil && copyFile(kept+".sum", sum) == nil {
		slog.Debug("release go.mod reused", "version", t.Version, "file", kept+".mod")
		return nil
	}
	if err := os.WriteFile(w.ModFile, base, 0o644); err != nil {
		return fmt.Errorf("write work go.mod: %w", err)
	}
	if err := os.WriteFile(sum, nil, 0o644); err != nil {
		return fmt.Errorf("write work go.sum: %w", err)
	}
	if err := w.resolve(ctx, t, extra, floors); err != nil {
		return fmt.Errorf("resolve release %s: %w", t.Version, err)
	}
	// Kept through temporary files, the .sum last: a .mod without its
	// .sum is not taken.
	if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
		return fmt.Errorf("keep release go.mod: %w", err)
	}
	for _, f := range [][2]string{{w.ModFile, kept + ".mod"}, {sum, kept + ".sum"}} {
		if err := copyFile(f[0], f[1]+".tmp"); err != nil {
			return fmt.Errorf("keep release go.mod: %w", err)
		}
		if err := os.Rename(f[1]+".tmp", f[1]); err != nil {
			return fmt.Errorf("keep release go.mod: %w", err)
		}
	}
	return nil
}

// resolve turns the work go.mod, releaseModFile's, into t's release: the
// versioned modules' graph (go get), the extra modules it lacks, floors
// raised (go get), and go.sum lines for every package the build compiles.
func (w *Work) resolve(ctx context.Context, t Target, extra []string, floors []Floor) error {
	get := func(mods ...string) error {
		_, err := w.goCmd(ctx, append([]string{"get", "-modfile=" + w.ModFile}, mods...)...)
		return err
	}
	args := make([]string, 0, len(t.Versioned))
	for _, m := range t.Versioned {
		args = append(args, m+"@"+t.Version)
	}
	if err := get(args...); err != nil {
		return err
	}
	release, err := w.buildList(ctx)
	if err != nil {
		return err
	}
	graph := release
	if add := missing(extra, graph); len(add) > 0 {
		if err := w.require(add); err != nil {
			return err
		}
		if graph, err = w.buildList(ctx); err != nil {
			return err
		}
	}
	raise := belowFloor(floors, graph)
	if len(raise) > 0 {
		args = args[:0]
		for _, fl := range raise {
			slog.Info("raising a module of the release that does not work with this Go", "module", fl.Path, "from", graph[fl.Path], "to", fl.Version, "why", fl.Why)
			args = append(args, fl.Path+"@"+fl.Version)
		}
		if err := get(args...); err != nil {
			return err
		}
		if graph, err = w.buildList(ctx); err != nil {
			return err
		}
	}
	for _, path := range moved(release, graph, raise) {
		slog.Warn("a module of the release is built at another version (the main module's imports or a floor need it)", "module", path, "release", release[path], "built", graph[path])
	}
	list := append([]string{"list", "-e", "-deps"}, w.GoFlags()...)
	list = append(append(list, w.BuildFlags...), w.Main)
	_, err = w.goCmd(ctx, append(list, w.Patterns...)...)
	return err
}

// missing returns the modules of extra (path@version) that graph (versions
// by path) does not hold.
func missing(extra []string, graph map[string]string) []string {
	var add []string
	for _, m := range extra {
		path, _, _ := strings.Cut(m, "@")
		if _, ok := graph[path]; !ok {
			add = append(add, m)
		}
	}
	return add
}

// belowFloor returns the floors of the modules that graph holds at a lower
// version.
func belowFloor(floors []Floor, graph map[string]string) []Floor {
	var raise []Floor
	for _, fl := range floors {
		if v, ok := graph[fl.Path]; ok && semver.Compare(v, fl.Version) < 0 {
			raise = append(raise, fl)
		}
	}
	return raise
}

// moved returns, sorted, the modules of release that graph holds at
// another version, other than the floors raised.
func moved(release, graph map[string]string, raised []Floor) []string {
	floored := map[string]bool{}
	for _, fl := range raised {
		floored[fl.Path] = true
	}
	var paths []string
	for path, v := range release {
		if graph[path] != v && !floored[path] {
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	return paths
}

// require adds requirements (path@version) to the work go.mod.
func (w *Work) require(mods []string) error {
	data, err := os.ReadFile(w.ModFile)
	if err != nil {
		return fmt.Errorf("read work go.mod: %w", err)
	}
	f, err := modfile.Parse(w.ModFile, data, nil)
	if err != nil {
		return fmt.Errorf("parse work go.mod: %w", err)
	}
	for _, m := range mods {
		path, v, _ := strings.Cut(m, "@")
		if err := f.AddRequire(path, v); err != nil {
			return fmt.Errorf("require %s: %w", m, err)
		}
	}
	f.Cleanup()
	if data, err = f.Format(); err != nil {
		return fmt.Errorf("format work go.mod: %w", err)
	}
	if err := os.WriteFile(w.ModFile, data, 0o644); err != nil {
		return fmt.Errorf("write work go.mod: %w", err)
	}
	return nil
}

// buildList returns the versions of the work go.mod's build list.
func (w *Work) buildList(ctx context.Context) (map[string]string, error) {
	out, err := w.goCmd(ctx, "list", "-m", "-modfile="+w.ModFile, "-mod=mod", "-f", "{{.Path}} {{.Version}}", "all")
	if err != nil {
		return nil, fmt.Errorf("build list: %w", err)
	}
	mods := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, v, ok := strings.Cut(line, " "); ok && v != "" {
			mods[path] = v
		}
	}
	return mods, nil
}
