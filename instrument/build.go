package instrument

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
)

// BuildPlain builds the target's main package of w into out without
// instrumentation, with the same module versions as an instrumented build
// (for baselines and benchmarks).
func BuildPlain(ctx context.Context, w *Work, out string, opts Options) (*Result, error) {
	t0 := time.Now()
	bin, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	res := &Result{Binary: bin, Work: w}
	res.Stats.Copies = len(w.Copies)
	lines, err := w.lineFiles()
	if err != nil {
		return nil, err
	}
	overlay := filepath.Join(w.Dir, "overlay.json")
	ov := &overlaySet{base: lines}
	if err := ov.write(filepath.Join(w.Dir, "overlay"), overlay); err != nil {
		return nil, err
	}
	if err := w.build(ctx, bin, overlay, "", 0, opts.Strip); err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	res.Stats.Builds = 1
	res.Stats.Seconds.Build = time.Since(t0).Seconds()
	res.Stats.Seconds.Total = res.Stats.Seconds.Build
	return res, nil
}

// Build rewrites every site, state and timeout point of cat in the prepared
// work dir w, builds the target's main package into out, and writes the
// catalog of what is in the binary (cat without the skipped IDs,
// renumbered) as catalog.json next to out. cat's positions may point at the
// module cache or at w's copies. Sites whose rewritten code does not
// compile are dropped and the build retried. Build fills the instrument and
// build phases of Result.Stats; the caller, which prepared and analysed,
// fills the others.
func Build(ctx context.Context, w *Work, cat *catalog.Catalog, out string, opts Options) (*Result, error) {
	t0 := time.Now()
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 6
	}
	bin, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	res := &Result{Binary: bin, Work: w, Skipped: map[string]string{}}
	res.Stats.Copies = len(w.Copies)
	res.Stats.SkipReasons = map[string]int{}
	res.Stats.Sites = len(cat.Sites)
	defer func() {
		res.Stats.Seconds.Total = time.Since(t0).Seconds()
		res.Stats.PeakRSSMB = peakRSSMB()
	}()
	lines, err := w.lineFiles()
	if err != nil {
		return nil, err
	}
	overlay := filepath.Join(w.Dir, "overlay.json")
	cat = localize(cat, w)
	// The agent reads its coverage table unsynchronised: -race would
	// report it.
	cover := !w.NoCoverage && !slices.Contains(w.BuildFlags, "-race")
	rw, err := newRewriter(ctx, w, cat, cover)
	if err != nil {
		return nil, err
	}
	cat = withSends(cat, rw.sends, w.Transport.Error)
	res.Stats.Seconds.Instrument += time.Since(t0).Seconds()
	skipped := res.Skipped               // ID -> reason
	compileErrs := map[string][]string{} // ID -> the compiler's messages
	var narrowed map[string]string       // ID -> why its disk fault kinds were dropped
	without := func() *catalog.Catalog {
		ids := make(map[string]bool, len(skipped))
		for id := range skipped {
			ids[id] = true
		}
		return cat.Without(ids)
	}
	for attempt := 0; ; attempt++ {
		ti := time.Now()
		kept := without()
		ov, err := rw.rewrite(kept)
		if err != nil {
			return nil, err
		}
		ov.base = lines
		if len(ov.skipped) > 0 {
			for id, r := range ov.skipped {
				skipped[id] = r
			}
			kept = without()
			if ov, err = rw.rewrite(kept); err != nil {
				return nil, err
			}
			ov.base = lines
			if len(ov.skipped) > 0 {
				return nil, fmt.Errorf("rewrite: %d sites skipped after re-indexing", len(ov.skipped))
			}
		}
		if err := ov.write(filepath.Join(w.Dir, "overlay"), overlay); err != nil {
			return nil, err
		}
		tb := time.Now()
		res.Stats.Seconds.Instrument += tb.Sub(ti).Seconds()
		kept.Blocks, kept.BlockFiles = ov.blocks, ov.blockFiles
		// The rewrite narrows some sites' kinds (a deferred call takes no
		// error): hash what is built.
		kept.Hash = kept.ComputeHash()
		err = w.build(ctx, bin, overlay, kept.Hash, kept.Blocks, opts.Strip)
		res.Stats.Builds++
		res.Stats.Seconds.Build += time.Since(tb).Seconds()
		if err == nil {
			narrowed = ov.narrowed
			res.Catalog = kept
			res.Stats.Instrumented = len(kept.Sites)
			res.Stats.ErrorSites, res.Stats.HookOnly = ov.errSites, ov.hookSites
			res.Stats.TimeoutPoints = ov.timeoutPoints
			res.Stats.States = ov.states
			res.Stats.RoleWrites = ov.roleWrites
			res.Stats.ObservePoints = ov.observePoints
			res.Stats.MemberMethods, res.Stats.BlankMembers = ov.memberMethods, ov.blankMembers
			res.Stats.StackCalls = ov.stackCalls
			res.Stats.IgnoredCalls = ov.ignoredCalls
			res.Stats.RanCalls, res.Stats.TestMainAdded = ov.ranCalls, len(ov.added) > 0
			res.Stats.SetupFuncs, res.Stats.SetupUnmatched = ov.setupStats(w.Setup)
			res.Stats.Blocks = ov.blocks
			res.Stats.Files, res.Stats.Packages = ov.files, ov.packages
			break
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("build: %w", ctx.Err())
		}
		bad := ov.blame(w, err.Error()) // the error holds the compiler's stderr
		if len(bad) == 0 || attempt >= opts.MaxRetries {
			return nil, fmt.Errorf("build: %w", err)
		}
		for _, id := range sortedKeys(bad) {
			if file, ok := strings.CutPrefix(id, coverPrefix); ok {
				rw.noCover[file] = true
				slog.Warn("coverage counters did not compile; dropping those of the file", "file", file, "error", strings.Join(bad[id], "; "))
				continue
			}
			if file, ok := strings.CutPrefix(id, testMainPrefix); ok {
				rw.testMain = ""
				slog.Warn("the TestMain added to check what the tests leave running did not compile; dropping it", "file", file, "error", strings.Join(bad[id], "; "))
				continue
			}
			if file, ok := strings.CutPrefix(id, ignoredPrefix); ok {
				rw.noIgnored[file] = true
				slog.Warn("the wrappers of discarded errors did not compile; dropping those of the test file", "file", file, "error", strings.Join(bad[id], "; "))
				continue
			}
			skipped[id] = SkipCompile
			compileErrs[id] = bad[id]
			slog.Warn("rewritten code did not compile; dropping it", "id", id, "error", strings.Join(bad[id], "; "))
		}
		slog.Warn("rebuilding without the dropped sites", "dropped", len(bad))
	}
	for _, r := range skipped {
		res.Stats.SkipReasons[r]++
	}
	res.Stats.Skipped = len(skipped)
	res.Dropped = dropped(cat, skipped, compileErrs)
	res.Dropped = append(res.Dropped, narrowedDisk(cat, narrowed)...)
	if err := writeDropped(DroppedFile(w.Dir), res.Dropped); err != nil {
		return nil, err
	}
	res.CatalogFile = filepath.Join(filepath.Dir(bin), "catalog.json")
	if err := res.Catalog.Save(res.CatalogFile); err != nil {
		return nil, err
	}
	return res, nil
}

// build runs go build of the main package into bin (go test -c of the
// package under test when w.Test), with the overlay, catalog hash and
// number of coverage blocks if given, stripped if strip; the error holds
// the compiler's output.
func (w *Work) build(ctx context.Context, bin, overlay, hash string, blocks int, strip bool) error {
	args := append([]string{"build"}, w.AllBuildFlags()...)
	if w.Test {
		args = append([]string{"test", "-c"}, w.AllBuildFlags()...)
	}
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	var ldflags []string
	if strip {
		ldflags = append(ldflags, "-s", "-w")
	}
	if hash != "" {
		ldflags = append(ldflags, "-X="+AgentModule+".catalogHash="+hash)
	}
	if blocks > 0 {
		ldflags = append(ldflags, "-X="+AgentModule+".coverBlocks="+strconv.Itoa(blocks))
	}
	if len(ldflags) > 0 {
		args = append(args, "-ldflags="+strings.Join(ldflags, " "))
	}
	args = append(args, "-o", bin, w.Main)
	_, err := w.goCmd(ctx, args...)
	return err
}

// peakRSSMB returns the process's peak resident set size in MiB (Linux).
func peakRSSMB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}
