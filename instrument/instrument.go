// Package instrument turns a target and its catalog into an instrumented
// binary without touching the user's tree or the module cache. A build is
// three steps, sequenced by the caller (package build does it for gofault):
//
//	w, _ := instrument.Prepare(ctx, target) // the work dir
//	res, _ := analysis.Run(ctx, ...w...)     // the catalog of the prepared tree
//	out, _ := instrument.Build(ctx, w, res.Catalog, bin, opts)
//
// Prepare writes a work directory: a copy of go.mod requiring and replacing
// the agent module, and copies of the dependency modules that hold target
// packages. Build rewrites every catalog site into a call through the agent,
// writes the rewritten files (and every file of the module copies, behind a
// //line directive naming its module cache path) through overlay.json and
// runs
//
//	go build -modfile=<work>/go.mod -overlay=<work>/overlay.json \
//	    -ldflags=-X=github.com/gofault/gofault/agent.catalogHash=<hash>
//
// Sites that cannot be rewritten (a result type that cannot be named, an
// error value whose package cannot be imported, a compile error in the
// rewritten code) are dropped from the catalog (catalog.Without renumbers
// it), which is written as catalog.json next to the binary, so the
// controller only ever plans sites that exist in the binary.
package instrument

import (
	"fmt"
	"strings"

	"github.com/gofault/gofault/catalog"
)

// Options tune Build.
type Options struct {
	// MaxRetries bounds the builds retried after dropping sites whose
	// rewritten code did not compile (default 6).
	MaxRetries int
	// Strip links without the symbol table and DWARF (-ldflags=-s -w), for
	// smaller binaries (bundles); stack traces keep their file:line.
	Strip bool
}

// Result describes a build.
type Result struct {
	// Binary is the absolute path of the built binary.
	Binary string
	// CatalogFile is catalog.json next to the binary ("" when uninstrumented).
	CatalogFile string
	// Catalog holds the instrumented sites, re-indexed (nil when
	// uninstrumented).
	Catalog *catalog.Catalog
	// Skipped maps the ID of every program point of the analysis catalog
	// (site, timeout point, state, role write, observation point) that is
	// not in the binary to the reason (Skip*).
	Skipped map[string]string
	// Dropped lists the same IDs with their positions, sorted by ID; those
	// dropped for a compile error carry the compiler's messages. Build also
	// writes it to <work>/dropped.json (DroppedFile).
	Dropped []Dropped
	// Work is the prepared work directory.
	Work  *Work
	Stats Stats
}

// Stats counts what a build did.
type Stats struct {
	Sites        int `json:"sites"`        // sites in the analysis catalog
	Instrumented int `json:"instrumented"` // sites rewritten and built
	ErrorSites   int `json:"error_sites"`  // of those, with an error branch
	HookOnly     int `json:"hook_only"`    // of those, delay/crash hook only
	Skipped      int `json:"skipped"`      // program points dropped (all five lists)
	// TimeoutPoints counts the timeout expressions wrapped and built.
	TimeoutPoints int `json:"timeout_points"`
	// States counts the abstract-state hooks inserted and built.
	States int `json:"states"`
	// RoleWrites counts the role-write hooks inserted and built.
	RoleWrites int `json:"role_writes"`
	// ObservePoints counts the observation-point hooks inserted and built.
	ObservePoints int `json:"observation_points"`
	// MemberMethods counts the member type's methods hooked (Target.Member),
	// BlankMembers those left out because their receiver is "_".
	MemberMethods int `json:"member_methods,omitempty"`
	BlankMembers  int `json:"blank_member_receivers,omitempty"`
	// StackCalls counts the runtime.Stack calls wrapped so that goroutine
	// lists leave out the agent's own (a test build: Target.Test).
	StackCalls int `json:"stack_calls,omitempty"`
	// IgnoredCalls counts the calls of the package's _test.go files whose
	// error the test discards, wrapped so that the agent reports an
	// injected one (a test build: Target.Test; agent.Ignored).
	IgnoredCalls int `json:"ignored_calls,omitempty"`
	// RanCalls counts the calls of testing.M's Run in the package's
	// TestMain that the agent wraps, and TestMainAdded is set when the
	// build added a TestMain (the package had none): either way the test
	// process reports what its tests left running (agent.Ran).
	RanCalls      int  `json:"ran_calls,omitempty"`
	TestMainAdded bool `json:"testmain_added,omitempty"`
	// SetupFuncs counts the test setup functions hooked (Target.Setup:
	// agent.SetupEnter at their entry); SetupUnmatched lists the patterns
	// of Target.Setup that matched no function.
	SetupFuncs     int      `json:"setup_funcs,omitempty"`
	SetupUnmatched []string `json:"setup_unmatched,omitempty"`
	// Blocks counts the coverage counters inserted and built.
	Blocks      int            `json:"blocks"`
	SkipReasons map[string]int `json:"skip_reasons"`  // why, counted
	Files       int            `json:"files"`         // rewritten files
	Packages    int            `json:"packages"`      // packages with rewritten files
	Copies      int            `json:"module_copies"` // dependency modules copied
	Builds      int            `json:"builds"`        // go build runs (retries included)
	Seconds     Phases         `json:"seconds"`
	// PeakRSSMB is the peak resident memory of this process (analysis and
	// type-checking for the rewrite; go build runs in child processes),
	// from /proc/self/status VmHWM; 0 where unavailable.
	PeakRSSMB float64 `json:"peak_rss_mb"`
}

// Phases are wall-clock seconds per phase.
type Phases struct {
	Prepare    float64 `json:"prepare"`
	Analyze    float64 `json:"analyze"`
	Instrument float64 `json:"instrument"`
	Build      float64 `json:"build"`
	Total      float64 `json:"total"`
}

// SkipSummary formats the skip reasons for humans, e.g. "go/defer call: 3".
func (s Stats) SkipSummary() string {
	var parts []string
	for _, r := range sortedKeys(s.SkipReasons) {
		parts = append(parts, fmt.Sprintf("%s: %d", r, s.SkipReasons[r]))
	}
	return strings.Join(parts, ", ")
}
