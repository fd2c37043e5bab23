package instrument

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"golang.org/x/tools/go/packages"

	"github.com/gofault/gofault/catalog"
)

// overlaySet is the result of one rewrite: the replaced and added files.
type overlaySet struct {
	base map[string][]byte // files of module copies behind a //line directive

	replace   map[string][]byte // target file -> content
	edits     map[string][]siteEdit
	errFiles  map[string]*errFile // target file -> generated errors file
	lineNames map[string]string   // target file -> name in //line directives
	skipped   map[string]string   // site ID -> reason
	// narrowed are the sites kept without their disk fault kinds, by ID,
	// with why (diskEdit).
	narrowed  map[string]string
	written   map[string]string // target file -> overlay file, set by write
	errSites  int
	hookSites int
	// timeoutPoints counts the wrapped timeout expressions.
	timeoutPoints int
	states        int
	roleWrites    int
	observePoints int
	// memberMethods counts the member type's methods hooked,
	// blankMembers those left out (a "_" receiver).
	memberMethods, blankMembers int
	// stackCalls counts the runtime.Stack calls the agent wraps (a test
	// build; see stackEdits).
	stackCalls int
	// ignoredCalls counts the test files' calls whose discarded error the
	// agent checks (a test build; see ignoredEdits).
	ignoredCalls int
	// ranCalls counts the calls of testing.M's Run the agent wraps, and
	// added the files a test build adds (a TestMain: see ranEdits).
	ranCalls int
	added    map[string][]byte
	// setupMatched counts the test setup functions hooked by the pattern
	// of Target.Setup they matched (see setupEdits).
	setupMatched map[string]int
	// blocks counts the coverage counters, blockFiles locate them.
	blocks     int
	blockFiles []catalog.BlockFile
	files      int
	packages   int
}

// rewrite rewrites the files holding cat's sites.
func (rw *rewriter) rewrite(cat *catalog.Catalog) (*overlaySet, error) {
	ov := &overlaySet{
		replace:   map[string][]byte{},
		edits:     map[string][]siteEdit{},
		errFiles:  map[string]*errFile{},
		lineNames: map[string]string{},
		skipped:   map[string]string{},
		narrowed:  map[string]string{},
		added:     map[string][]byte{},

		setupMatched: map[string]int{},
	}
	touched := map[string]bool{} // the files with anything to rewrite
	sites := loadedOnly(cat.Sites, siteAt, rw.files, SkipNotFound, ov.skipped, touched)
	points := loadedOnly(cat.TimeoutPoints, timeoutAt, rw.files, SkipTimeoutNotFound, ov.skipped, touched)
	states := loadedOnly(cat.States, stateAt, rw.files, SkipStateNotFound, ov.skipped, touched)
	roles := loadedOnly(roleWrites(cat), roleWriteAt, rw.files, SkipRoleNotFound, ov.skipped, touched)
	observe := loadedOnly(cat.ObservePoints, observeAt, rw.files, SkipObserveNotFound, ov.skipped, touched)
	if rw.member != nil {
		for f, ref := range rw.files {
			if ref.pkg.PkgPath == rw.member.rule.pkg {
				touched[f] = true
			}
		}
	}
	if rw.cover {
		for f, ref := range rw.files {
			if !rw.noCover[f] && !ref.test {
				touched[f] = true
			}
		}
	}
	if rw.w.Test {
		for f, ref := range rw.files {
			if len(stackCalls(ref.file, ref.pkg.TypesInfo)) > 0 ||
				ref.test && !rw.noIgnored[f] && len(ignoredCalls(ref.file, ref.pkg.TypesInfo)) > 0 ||
				ref.test && !rw.noIgnored[f] && len(runCalls(ref.file, ref.pkg.TypesInfo)) > 0 ||
				ref.test && len(setupFuncs(ref.file, rw.w.Setup)) > 0 {
				touched[f] = true
			}
		}
	}
	names := slices.Sorted(maps.Keys(touched))
	errSites := map[*packages.Package][]*catalog.Site{}
	for _, name := range names {
		ref := rw.files[name]
		lineName := rw.w.OrigPath(name)
		out := rewriteFile(fileInput{
			src: ref.src, file: ref.file, fset: ref.pkg.Fset, info: ref.pkg.TypesInfo, pkg: ref.pkg.Types,
			lineName: lineName, renamed: lineName != name, imports: rw.imports, timeouts: points[name],
			states: states[name], roles: roles[name], roleValues: roleValues(cat), observe: observe[name],
			cover: rw.cover && !rw.noCover[name] && !ref.test, firstBlock: ov.blocks, member: rw.member, sendPeers: rw.sendPeers,
			stacks: rw.w.Test, ignored: ref.test && !rw.noIgnored[name], setup: setupPatterns(ref.test, rw.w.Setup),
		}, sites[name])
		ov.blankMembers += out.blankMembers
		if len(out.blocks) > 0 {
			ov.blockFiles = append(ov.blockFiles, catalog.BlockFile{File: lineName, First: ov.blocks, Lines: out.blocks})
			ov.blocks += len(out.blocks)
		}
		for idx, r := range out.skipped {
			ov.skipped[cat.Sites[idx].ID] = r
		}
		for _, m := range []map[string]string{out.skippedPoints, out.skippedStates, out.skippedRoles, out.skippedObserve} {
			maps.Copy(ov.skipped, m)
		}
		if out.src == nil {
			continue
		}
		ov.replace[name] = out.src
		ov.edits[name] = out.edits
		ov.lineNames[name] = lineName
		for _, e := range out.edits {
			if e.narrowed != "" {
				ov.narrowed[e.site.ID] = e.narrowed
			}
			switch {
			case e.block: // counted in ov.blocks
			case e.stack:
				ov.stackCalls++
			case e.ran:
				ov.ranCalls++
			case e.ignored:
				ov.ignoredCalls++
			case e.setup != "":
				ov.setupMatched[e.setup]++
			case e.member == memberHook:
				ov.memberMethods++
			case e.member != 0: // a receiver's name
			case e.point != nil:
				ov.timeoutPoints++
			case e.state != nil:
				ov.states++
			case e.role != nil:
				ov.roleWrites++
			case e.observe != nil:
				ov.observePoints++
			case e.errBranch:
				ov.errSites++
				errSites[ref.pkg] = append(errSites[ref.pkg], e.site)
			default:
				ov.hookSites++
			}
		}
	}
	if rw.w.Test && rw.testMain != "" {
		ov.added[rw.testMain] = testMainSource(rw.testMainPkg)
	}
	ov.files = len(ov.replace)
	pkgs := map[string]bool{}
	for name := range ov.replace {
		pkgs[rw.files[name].pkg.PkgPath] = true
	}
	ov.packages = len(pkgs)
	for p, sites := range errSites {
		files, err := errorFiles(p.Types.Name(), p.PkgPath, sites, rw.names)
		if err != nil {
			return nil, fmt.Errorf("package %s: %w", p.PkgPath, err)
		}
		dir := filepath.Dir(p.CompiledGoFiles[0])
		for _, f := range files {
			ov.errFiles[filepath.Join(dir, f.name)] = f
		}
	}
	return ov, nil
}

// write stores the overlay's files under dir and writes the overlay JSON.
func (ov *overlaySet) write(dir, jsonPath string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("overlay: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("overlay: %w", err)
	}
	repl := map[string]string{}
	ov.written = repl
	n := 0
	put := func(target string, data []byte) error {
		n++
		p := filepath.Join(dir, fmt.Sprintf("%04d_%s", n, filepath.Base(target)))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("overlay: %w", err)
		}
		repl[target] = p
		return nil
	}
	for _, t := range sortedKeys(ov.base) {
		if _, ok := ov.replace[t]; ok {
			continue
		}
		if err := put(t, ov.base[t]); err != nil {
			return err
		}
	}
	for _, t := range sortedKeys(ov.replace) {
		if err := put(t, ov.replace[t]); err != nil {
			return err
		}
	}
	for _, t := range sortedKeys(ov.errFiles) {
		if err := put(t, ov.errFiles[t].src); err != nil {
			return err
		}
	}
	for _, t := range sortedKeys(ov.added) {
		if err := put(t, ov.added[t]); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(struct{ Replace map[string]string }{repl}, "", "\t")
	if err != nil {
		return fmt.Errorf("overlay: %w", err)
	}
	if err := os.WriteFile(jsonPath, data, 0o644); err != nil {
		return fmt.Errorf("overlay: %w", err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
