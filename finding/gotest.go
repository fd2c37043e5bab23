package finding

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/gofaulttest"
	"github.com/gofault/gofault/store"
)

// GoTestOptions say where ExportGoTest writes a finding's test and how
// the test replays it.
type GoTestOptions struct {
	// Out is the file to write; "" is gofault_<finding>_test.go in the
	// current directory, "-" writes to W.
	Out string
	W   io.Writer
	// Package is the test's package clause; "" is that of the Go files
	// in Out's directory (PackageOf).
	Package string
	// Config is the path of the target's gofault config from the test's
	// directory; "" is "gofault.yaml".
	Config string
	// Sets are config overrides the test passes on (gofaulttest.Set), as
	// gofault run --set takes them: the scenario the finding needs.
	Sets []string
	// Runs is how many times the test replays the finding; 0 is
	// gofaulttest.DefaultReplays.
	Runs int
}

// Exported is what ExportGoTest wrote: the file ("-" for
// GoTestOptions.W) and the test's name.
type Exported struct {
	Path, Test string
}

// ExportGoTest writes the finding that arg names in the latest campaign
// of st (Lookup: "2ee8b133dc", "2ee8b133dc/2") as a Go test for the
// target's repository: it replays the faults of the finding's trial
// through gofaulttest and fails while the finding's checker fails again.
func ExportGoTest(ctx context.Context, st *store.Store, arg string, opts GoTestOptions) (*Exported, error) {
	l, err := Lookup(ctx, st, arg)
	if err != nil {
		return nil, err
	}
	tr, err := st.Trial(ctx, l.Trial())
	if err != nil {
		return nil, fmt.Errorf("finding %s: trial %s: %w", l.Finding.ID, l.Trial(), err)
	}
	if len(tr.Injections) == 0 {
		return nil, fmt.Errorf("finding %s: trial %s injected no fault (a fault-free failure): there is nothing to replay; gofault replay %s re-runs it", l.Finding.ID, tr.ID, tr.ID)
	}
	t := Test{
		Finding: gofaulttest.Finding{ID: l.Finding.ID, Trial: tr.ID, Checker: l.Finding.Checker, Symptom: l.Finding.Symptom, Injections: tr.Injections},
		Replay:  l.Finding.Sites[l.Site-1].Replay,
		Config:  cmp.Or(opts.Config, "gofault.yaml"),
		Sets:    opts.Sets,
		Runs:    cmp.Or(opts.Runs, gofaulttest.DefaultReplays),
		Package: opts.Package,
	}
	out := cmp.Or(opts.Out, "gofault_"+l.Finding.ID+"_test.go")
	if t.Package == "" && out != "-" {
		if t.Package, err = PackageOf(filepath.Dir(out)); err != nil {
			return nil, err
		}
	}
	src, err := t.Render()
	if err != nil {
		return nil, err
	}
	if out == "-" {
		_, err = opts.W.Write(src)
	} else {
		err = os.WriteFile(out, src, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("write the test of finding %s: %w", l.Finding.ID, err)
	}
	return &Exported{Path: out, Test: t.Name()}, nil
}

// PackageOf returns the package clause a test file in dir needs: that of
// its _test.go files (an external test package, "minikv_test", if they
// use one), else that of its other Go files.
func PackageOf(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return "", err
	}
	var pkg string
	for _, f := range files {
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly)
		if err != nil {
			return "", fmt.Errorf("package of %s: %w", dir, err)
		}
		if name := ast.Name.Name; strings.HasSuffix(f, "_test.go") || pkg == "" {
			pkg = name
			if strings.HasSuffix(f, "_test.go") {
				return pkg, nil
			}
		}
	}
	if pkg == "" {
		return "", fmt.Errorf("no Go files in %s to take the test's package from: name it with --package", dir)
	}
	return pkg, nil
}

// Test is a finding's regression test, as ExportGoTest writes it.
type Test struct {
	Package string
	Finding gofaulttest.Finding
	// Replay is the gofault replay command of the finding's trial.
	Replay string
	// Config, Sets and Runs are gofaulttest.Run's: the config's path,
	// its overrides and the number of replays.
	Config string
	Sets   []string
	Runs   int
}

// Name is the test function's name.
func (t *Test) Name() string { return "TestGofault" + t.Finding.ID }

// Render returns the test's source, gofmt'ed.
func (t *Test) Render() ([]byte, error) {
	var b bytes.Buffer
	f := &t.Finding
	v := "finding" + f.ID
	fmt.Fprintf(&b, "package %s\n\nimport (\n\"testing\"\n", t.Package)
	lits := injectionsLit(f)
	if strings.Contains(lits, "time.") {
		b.WriteString("\"time\"\n")
	}
	b.WriteString("\n\"github.com/gofault/gofault/catalog\"\n\"github.com/gofault/gofault/gofaulttest\"\n\"github.com/gofault/gofault/record\"\n)\n\n")
	fmt.Fprintf(&b, "// %s is a regression test of gofault finding %s:\n//\n//\t[%s] %s\n//\n", t.Name(), f.ID, f.Checker, oneLine(f.Symptom))
	fmt.Fprintf(&b, "// It was written by gofault export --go-test from trial %s, which\n// `%s` replays; the trial's faults:\n//\n", f.Trial, t.Replay)
	for i, inj := range f.Injections {
		fmt.Fprintf(&b, "//\tfault %d: %s\n", i+1, faultLine(inj.Kind.String(), inj.SiteID, inj.Node, inj.Role, inj.Error, inj.Delay, inj.Occurrence))
		for _, fr := range inj.Stack {
			fmt.Fprintf(&b, "//\t  %s %s:%d\n", fr.Func, filepath.Base(fr.File), fr.Line)
		}
	}
	fmt.Fprintf(&b, `//
// It builds the target of %[1]s with gofault's hooks and runs its cluster
// and workload %[2]d times, each time injecting those faults again (the same
// kind at the same site, on the same node, from the same call stack, at the
// same occurrence), judged by the config's checkers. It fails when the %[3]s
// checker fails in any run: the bug is still there (a replay repeats the
// faults, not the timing, hence several runs). It fails too when no run
// reached the faults, since such a run says nothing about the bug. Once the
// bug is fixed it passes. It runs a real cluster, so -short skips it.
func %[4]s(t *testing.T) {
	if testing.Short() {
		t.Skip("replays gofault finding %[5]s on a real cluster")
	}
	gofaulttest.Run(t, %[6]s, gofaulttest.Replay(%[7]s), gofaulttest.Trials(%[2]d)`,
		t.Config, t.Runs, f.Checker, t.Name(), f.ID, strconv.Quote(t.Config), v)
	if len(t.Sets) > 0 {
		b.WriteString(",\n gofaulttest.Set(")
		for i, s := range t.Sets {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(s))
		}
		b.WriteString(")")
	}
	b.WriteString(")\n}\n\n")
	fmt.Fprintf(&b, "// %s is finding %s and the faults of its trial %s.\nvar %s = gofaulttest.Finding{\nID: %q, Trial: %q,\nChecker: %q,\nSymptom: %s,\nInjections: []record.Injection{\n%s},\n}\n",
		v, f.ID, f.Trial, v, f.ID, f.Trial, f.Checker, strconv.Quote(f.Symptom), lits)
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format the test of finding %s: %w\n%s", f.ID, err, b.Bytes())
	}
	return src, nil
}

// faultLine describes one injected fault for the test's doc.
func faultLine(kind, site, node, role, errName string, delay time.Duration, occurrence int) string {
	s := fmt.Sprintf("%s at %s on %s", kind, site, node)
	if role != "" {
		s += " (" + role + ")"
	}
	if errName != "" {
		s += ", " + oneLine(errName)
	}
	if delay > 0 {
		s += ", for " + delay.String()
	}
	if occurrence > 0 {
		s += fmt.Sprintf(", occurrence %d", occurrence)
	}
	return s
}

// oneLine keeps s on one comment line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// injectionsLit is the Go literal of f's injections, one composite
// literal a line, with only the fields set that a replay or a reader
// needs: not the time, the catalog index or the goroutine's task and
// instance, which another run or build changes, and a frame's file by
// its base name (a replay matches stacks by function; the path was the
// original's machine's).
func injectionsLit(f *gofaulttest.Finding) string {
	var b strings.Builder
	for _, inj := range f.Injections {
		var fields []string
		add := func(name, lit string) { fields = append(fields, name+": "+lit) }
		add("Node", strconv.Quote(inj.Node))
		add("SiteID", strconv.Quote(inj.SiteID))
		add("Kind", kindLit(inj.Kind))
		for _, s := range []struct{ name, v string }{{"Error", inj.Error}, {"Role", inj.Role}, {"StateID", inj.StateID}, {"Observer", inj.Observer}, {"Peer", inj.Peer}} {
			if s.v != "" {
				add(s.name, strconv.Quote(s.v))
			}
		}
		if inj.Delay != 0 {
			add("Delay", durationLit(inj.Delay))
		}
		if inj.Occurrence != 0 {
			add("Occurrence", strconv.Itoa(inj.Occurrence))
		}
		if len(inj.Side) > 0 {
			q := make([]string, len(inj.Side))
			for i, s := range inj.Side {
				q[i] = strconv.Quote(s)
			}
			add("Side", "[]string{"+strings.Join(q, ", ")+"}")
		}
		b.WriteString("{" + strings.Join(fields, ", "))
		if len(inj.Stack) > 0 {
			b.WriteString(",\nStack: []record.Frame{\n")
			for _, fr := range inj.Stack {
				fmt.Fprintf(&b, "{Func: %q, File: %q, Line: %d},\n", fr.Func, filepath.Base(fr.File), fr.Line)
			}
			b.WriteString("},\n")
		}
		b.WriteString("},\n")
	}
	return b.String()
}

// durationLit is d as a Go expression.
func durationLit(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Second, "time.Second"}, {time.Millisecond, "time.Millisecond"}, {time.Microsecond, "time.Microsecond"}} {
		if d%u.d == 0 {
			return fmt.Sprintf("%d * %s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("time.Duration(%d)", int64(d))
}

// kindNames are the Go names of catalog's fault kinds.
var kindNames = map[catalog.Kind]string{
	catalog.KindError: "KindError", catalog.KindDelay: "KindDelay", catalog.KindCrash: "KindCrash",
	catalog.KindPartition: "KindPartition", catalog.KindPowerLoss: "KindPowerLoss", catalog.KindReboot: "KindReboot",
	catalog.KindDisconnect: "KindDisconnect", catalog.KindOneWay: "KindOneWay", catalog.KindSplit: "KindSplit",
	catalog.KindLeaderCut: "KindLeaderCut", catalog.KindCorrupt: "KindCorrupt", catalog.KindTorn: "KindTorn",
	catalog.KindCrashAfter: "KindCrashAfter", catalog.KindPowerLossAfter: "KindPowerLossAfter",
	catalog.KindPause: "KindPause", catalog.KindStop: "KindStop", catalog.KindRot: "KindRot",
}

// kindLit is k as a Go expression.
func kindLit(k catalog.Kind) string {
	if n, ok := kindNames[k]; ok {
		return "catalog." + n
	}
	return fmt.Sprintf("catalog.Kind(%d)", uint32(k))
}
