package build

import (
	"fmt"
	"io"
	"strings"

	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/instrument"
)

// WriteText prints what the build made, as gofault build does: the
// binary, and for an instrumented one (not plain) its catalog, sites,
// states, coverage blocks, dropped sites, rewrites and times.
func (r *Result) WriteText(w io.Writer, plain bool) {
	st := r.Stats
	if r.Reused {
		fmt.Fprintf(w, "reusing build %s (inputs unchanged; --rebuild builds afresh) in %.1fs\n", r.Binary, st.Seconds.Total)
	}
	if plain {
		if !r.Reused {
			fmt.Fprintf(w, "built %s (uninstrumented) in %.1fs\n", r.Binary, st.Seconds.Total)
		}
		return
	}
	if !r.Reused {
		fmt.Fprintf(w, "built %s\n", r.Binary)
	}
	fmt.Fprintf(w, "  catalog    %s (hash %s)\n", r.CatalogFile, r.Catalog.Hash)
	fmt.Fprintf(w, "  sites      %d found, %d instrumented (%d with error branch, %d delay/crash hook only), %d skipped\n",
		st.Sites, st.Instrumented, st.ErrorSites, st.HookOnly, st.Skipped)
	if len(r.Catalog.States) > 0 {
		fmt.Fprintf(w, "  states     %d hooks in %d task units\n", st.States, len(r.Catalog.Tasks))
	}
	if r.Catalog.Blocks > 0 {
		fmt.Fprintf(w, "  coverage   %d basic blocks counted in %d files\n", r.Catalog.Blocks, len(r.Catalog.BlockFiles))
	}
	if st.Skipped > 0 {
		fmt.Fprintf(w, "  skipped    %s\n", st.SkipSummary())
	}
	writeCompileDropped(w, r.Dropped)
	fmt.Fprintf(w, "  rewritten  %d files in %d packages; %d dependency modules copied\n", st.Files, st.Packages, st.Copies)
	if r.Reused {
		return
	}
	fmt.Fprintf(w, "  seconds    prepare %.1f, analyse %.1f, instrument %.1f, build %.1f (%d go build runs), total %.1f\n",
		st.Seconds.Prepare, st.Seconds.Analyze, st.Seconds.Instrument, st.Seconds.Build, st.Builds, st.Seconds.Total)
	if st.PeakRSSMB > 0 {
		fmt.Fprintf(w, "  memory     peak %.0f MiB (analysis and rewrite; go build not included)\n", st.PeakRSSMB)
	}
}

// WriteText prints what the bundle in dir holds, as gofault build
// --bundle does.
func (r *BundleResult) WriteText(w io.Writer, dir string) {
	m := r.Manifest
	how := "built"
	if r.Node.Reused {
		how = "reused (inputs unchanged)"
	}
	fmt.Fprintf(w, "bundle %s: %s for %s/%s, gofault %s\n", dir, strings.TrimSpace(m.Target+" "+m.TargetVersion), m.GOOS, m.GOARCH, m.Gofault)
	fmt.Fprintf(w, "  node       %s (%s; %d sites, catalog %s)\n", m.Node, how, len(r.Node.Catalog.Sites), m.CatalogHash)
	if m.Workload != "" {
		how = "built"
		if r.WorkloadReused {
			how = "reused (inputs unchanged)"
		}
		fmt.Fprintf(w, "  workload   %s (%s)\n", m.Workload, how)
	}
	writeCompileDropped(w, r.Node.Dropped)
	fmt.Fprintf(w, "  size       %.1f MiB; run it with: gofault run --bundle %s\n", float64(r.Bytes)/(1<<20), dir)
}

// writeCompileDropped names every site the build dropped because its
// rewritten code did not compile, with the compiler's error.
func writeCompileDropped(w io.Writer, ds []instrument.Dropped) {
	for _, d := range ds {
		if d.Reason != instrument.SkipCompile {
			continue
		}
		fmt.Fprintf(w, "  dropped    %s %s at %s: %s\n", d.What, d.ID, d.Pos(), strings.Join(d.Errors, "; "))
	}
}

// WriteDropped lists the sites the build of cfg's target dropped because
// their rewrite did not compile (<work>/build/dropped.json): no fault
// could strike there. Nothing when there are none or the build's work dir
// is gone.
func WriteDropped(w io.Writer, cfg *config.Config) {
	ds, err := instrument.LoadDropped(instrument.DroppedFile(Target(cfg).WorkDir))
	if err != nil {
		fmt.Fprintf(w, "\ndropped sites: %v\n", err)
		return
	}
	var compile []instrument.Dropped
	for _, d := range ds {
		if d.Reason == instrument.SkipCompile {
			compile = append(compile, d)
		}
	}
	if len(compile) == 0 {
		return
	}
	fmt.Fprintf(w, "\ndropped sites: %d could not be instrumented (their rewrite did not compile), so no fault struck there:\n", len(compile))
	for _, d := range compile {
		fmt.Fprintf(w, "  %s %s at %s: %s\n", d.What, d.ID, d.Pos(), strings.Join(d.Errors, "; "))
	}
}
