package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// runApp analyses the testdata module copied to (or found in) dir.
func runApp(t *testing.T, dir string) *Result {
	t.Helper()
	res, err := Run(context.Background(), Options{Dir: dir, Patterns: []string{"example.com/app/..."}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := res.Catalog.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	return res
}

func appDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("testdata", "app"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestGolden(t *testing.T) {
	dir := appDir(t)
	res := runApp(t, dir)
	var buf bytes.Buffer
	if err := catalog.WriteSites(&buf, res.Catalog, dir); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("\n")
	for _, row := range res.Stats.Packages {
		fmt.Fprintf(&buf, "%s", row.Package)
		keys := make([]string, 0, len(row.Counts))
		for k := range row.Counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&buf, " %s=%d", k, row.Counts[k])
		}
		buf.WriteString("\n")
	}
	golden := filepath.Join("testdata", "app.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("sites differ from %s (run with -update after checking):\n%s", golden, diffLines(string(want), got))
	}
}

// TestExpectations states the patterns of the testdata in code, so a
// golden update cannot silently accept a regression.
func TestExpectations(t *testing.T) {
	res := runApp(t, appDir(t))
	byID := map[string]catalog.Site{}
	for _, s := range res.Catalog.Sites {
		byID[s.ID] = s
	}
	const st, pe = "example.com/app/store.", "example.com/app/peer."
	tests := []struct {
		id     string
		kind   catalog.Kind // 0: must be absent
		io     string
		errors []string
	}{
		{st + "Open:os.MkdirAll#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter, "disk", []string{"EIO", "ENOSPC"}},
		{st + "Open:os.OpenFile#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter, "disk", []string{"EIO", "ENOSPC"}},
		{st + "(*Store).Put:store.validate#0", catalog.KindError, "", []string{`"empty key"`}},
		{st + "(*Store).Put:store.persist#0", 0, "", nil}, // persist only propagates
		{st + "persist:(io.Writer).Write#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter | catalog.KindTorn, "disk", []string{"EIO", "ENOSPC"}},
		{st + "checksum:(io.Writer).Write#0", 0, "", nil}, // hash and bytes.Buffer: pruned
		{st + "(*Store).Put:(*os.File).Sync#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter, "disk", []string{"EIO"}},
		{st + "(*Store).PutBatch:(*bufio.Writer).Write#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter, "disk", []string{"EIO", "ENOSPC"}},
		{st + "(*Store).PutBatch:(*bufio.Writer).Flush#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter, "disk", []string{"EIO", "ENOSPC"}},
		{st + "Render:(*bufio.Writer).Write#0", 0, "", nil}, // over bytes.Buffer: pruned
		{st + "Render:(*bufio.Writer).Flush#0", 0, "", nil},
		{st + "(*Store).Lookup:(*store.Store).Get#0", catalog.KindError, "", []string{"ErrNotFound"}},
		{st + "(*Store).Load:io.ReadFull#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter | catalog.KindCorrupt, "disk", []string{"EIO", "ErrUnexpectedEOF"}},
		{st + "(*Store).Load:store.verify#0", catalog.KindError, "", []string{"CorruptError"}},
		{st + "(*Log[T]).Append:fmt.Fprintf#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter, "disk", []string{"EIO", "ENOSPC"}},
		// io/ioutil's wrappers are disk primitives too, corrupt and torn.
		{st + "ReadMeta:ioutil.ReadFile#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter | catalog.KindCorrupt, "disk", []string{"EIO", "EMFILE"}},
		{st + "WriteMeta:ioutil.WriteFile#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter | catalog.KindTorn, "disk", []string{"EIO", "ENOSPC"}},
		// A method named init is a method; a package's func init is not analysed.
		{st + "(*journal).init:os.MkdirAll#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter, "disk", []string{"EIO", "ENOSPC"}},
		{st + "init#1:os.Remove#0", 0, "", nil},
		{st + "(*Store).Close:(*os.File).Close#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter, "disk", []string{"EIO"}},
		// A function value bound to a file's WriteAt (bolt's page writes).
		{st + "(*pager).WritePage:(*os.File).WriteAt#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter | catalog.KindTorn, "disk", []string{"EIO", "ENOSPC"}},
		{pe + "Send:net.Dial#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash, "net", []string{"ECONNREFUSED", "ETIMEDOUT"}},
		{pe + "Send:(net.Conn).Write#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash, "net", []string{"EPIPE", "ECONNRESET", "deadline"}},
		{pe + "Send:io.ReadFull#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash, "net", []string{"ECONNRESET", "deadline", "EOF", "ErrUnexpectedEOF"}},
		{pe + "Serve:(net.Listener).Accept#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash, "net", []string{"EMFILE"}},
		{pe + "handle:(*bufio.Reader).ReadString#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash, "net", []string{"ECONNRESET", "deadline", "EOF"}},
		{pe + "handle:fmt.Fprintf#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash, "net", []string{"EPIPE", "ECONNRESET", "deadline"}},
		{pe + "handle:(*store.Store).Put#0", 0, "", nil},   // Put creates nothing itself
		{pe + "Parse:io.ReadFull#0", 0, "", nil},           // strings.Reader: pruned
		{pe + "Fetch:(*store.Store).Lookup#0", 0, "", nil}, // propagation only
		{pe + "Handler$1:io.ReadAll#0", catalog.KindError | catalog.KindDelay | catalog.KindCrash, "net", []string{"ECONNRESET", "deadline", "EOF"}},
		// A response write fails only with the client's connection, which
		// a returned error cannot imitate: a delay (and crash) site only.
		{pe + "Handler$1:(http.ResponseWriter).Write#0", catalog.KindDelay | catalog.KindCrash, "net", nil},
		{pe + "Handler$1:(*store.Store).Put#0", 0, "", nil},
	}
	for _, tt := range tests {
		s, ok := byID[tt.id]
		if tt.kind == 0 {
			if ok {
				t.Errorf("%s: unexpected site %s", tt.id, s.Kind.String())
			}
			continue
		}
		if !ok {
			t.Errorf("%s: missing", tt.id)
			continue
		}
		var names []string
		for _, e := range s.Errors {
			names = append(names, e.Name)
		}
		if s.Kind != tt.kind || s.IO != tt.io || strings.Join(names, ",") != strings.Join(tt.errors, ",") {
			t.Errorf("%s: got kind=%s io=%q errors=%v, want kind=%s io=%q errors=%v",
				tt.id, s.Kind.String(), s.IO, names, tt.kind.String(), tt.io, tt.errors)
		}
	}
	if got := res.Stats.Totals[CountPrunedInvalid]; got < 4 {
		t.Errorf("pruned_invalid = %d, want ≥ 4 (checksum, Render Write/Flush, Parse)", got)
	}
}

// copyTree copies the testdata module to a temporary directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestStableIDs edits a copy of the testdata (blank lines, an unrelated
// function and an unrelated call) and checks that every site keeps its ID
// while its line moves.
func TestStableIDs(t *testing.T) {
	before := runApp(t, appDir(t))
	dir := copyTree(t, appDir(t))
	for _, f := range []string{"store/store.go", "peer/peer.go"} {
		p := filepath.Join(dir, f)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		src := string(data)
		i := strings.Index(src, "import (")
		i += strings.Index(src[i:], "\n)\n") + 3
		edit := "\n\n\n// unrelated is an unrelated edit.\nfunc unrelated() int {\n\tx := 1\n\treturn x + 1\n}\n\n"
		src = src[:i] + edit + src[i:]
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	after := runApp(t, dir)
	if len(before.Catalog.Sites) != len(after.Catalog.Sites) {
		t.Fatalf("site count changed: %d -> %d", len(before.Catalog.Sites), len(after.Catalog.Sites))
	}
	moved := 0
	for i, b := range before.Catalog.Sites {
		a := after.Catalog.Sites[i]
		if a.ID != b.ID || a.Index != b.Index || a.Kind != b.Kind {
			t.Errorf("site %d: %s %s -> %s %s", i, b.ID, b.Kind.String(), a.ID, a.Kind.String())
		}
		if a.Line != b.Line {
			moved++
		}
	}
	if moved == 0 {
		t.Error("no site moved: the edit did not take effect")
	}
	if before.Catalog.Hash != after.Catalog.Hash {
		t.Errorf("hash changed: %s -> %s", before.Catalog.Hash, after.Catalog.Hash)
	}
}

// TestErrorValuesCompile writes every site's error values into a file in
// the site's package (dropping the package's own qualifier, as the
// instrumenter does) and builds the module.
func TestErrorValuesCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	src := appDir(t)
	res := runApp(t, src)
	dir := copyTree(t, src)
	files := map[string]*strings.Builder{}
	imports := map[string]map[string]bool{}
	for _, s := range res.Catalog.Sites {
		rel, err := filepath.Rel(src, filepath.Dir(s.File))
		if err != nil {
			t.Fatal(err)
		}
		name := pathName(s.Pkg)
		if s.Pkg == "example.com/app/cmd/node" {
			name = "main"
		}
		b := files[rel]
		if b == nil {
			b = &strings.Builder{}
			files[rel] = b
			imports[rel] = map[string]bool{}
		}
		for i, e := range s.Errors {
			expr := e.Expr
			for _, imp := range e.Imports {
				if imp == s.Pkg {
					expr = strings.ReplaceAll(expr, pathName(imp)+".", "")
					continue
				}
				imports[rel][imp] = true
			}
			fmt.Fprintf(b, "var _ error = %s // site %d value %d\n", expr, s.Index, i)
		}
		_ = name
	}
	for rel, b := range files {
		name := pathName(filepath.ToSlash(rel))
		if strings.HasPrefix(rel, "cmd") {
			name = "main"
		}
		var out strings.Builder
		fmt.Fprintf(&out, "package %s\n\nimport (\n", name)
		for imp := range imports[rel] {
			fmt.Fprintf(&out, "\t%q\n", imp)
		}
		out.WriteString(")\n\n" + b.String())
		if err := os.WriteFile(filepath.Join(dir, rel, "zz_errors.go"), []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("error values do not compile: %v\n%s", err, out)
	}
}

func TestStatsJSON(t *testing.T) {
	s := Stats{
		Packages: []PackageStats{{Package: "a", Counts: Counts{CountFunctions: 2, "state_machines": 1}}},
		Totals:   Counts{CountPackages: 1, CountFunctions: 2, "state_machines": 1},
		Seconds:  1.5,
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"packages", "functions", "error_sites", "delay_sites", "pruned_invalid", "seconds", "state_machines", "per_package"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON %s lacks key %q", data, k)
		}
	}
	if m["functions"].(float64) != 2 || m["seconds"].(float64) != 1.5 {
		t.Errorf("JSON %s: wrong values", data)
	}
}

func TestPathName(t *testing.T) {
	tests := []struct{ path, want string }{
		{"io/fs", "fs"},
		{"go.etcd.io/etcd/server/v3", "server"},
		{"go.etcd.io/etcd/server/v3/wal", "wal"},
		{"syscall", "syscall"},
		{"gopkg.in/yaml.v3", "yaml.v3"},
	}
	for _, tt := range tests {
		if got := pathName(tt.path); got != tt.want {
			t.Errorf("pathName(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// diffLines shows the first differing lines of two texts.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, wl, gl)
			if n++; n > 10 {
				break
			}
		}
	}
	return b.String()
}

// TestCustomPass checks that a later pass slots in: it reads the sites
// pass's result through Requires, whatever order it is listed in, and its
// counters reach the statistics.
func TestCustomPass(t *testing.T) {
	count := &Pass{
		Name:       "count-io",
		Requires:   []*Pass{SitesPass},
		ResultType: reflect.TypeFor[int](),
		Run: func(u *Unit) (any, error) {
			n := 0
			for _, s := range u.ResultOf[SitesPass].(*Sites).List {
				if s.IO != "" {
					u.Count(s.Pkg, "io_sites_seen", 1)
					n++
				}
			}
			return n, nil
		},
	}
	res, err := Run(context.Background(), Options{
		Dir:      appDir(t),
		Patterns: []string{"example.com/app/..."},
		Passes:   []*Pass{count, StatesPass, SievePass}, // SitesPass only by requirement
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Stats.Totals["io_sites_seen"], res.Stats.Totals[CountDelaySites]; got != want || got == 0 {
		t.Errorf("io_sites_seen = %d, want %d (> 0)", got, want)
	}
	if names := res.Stats.CounterNames(); names[len(names)-1] != "io_sites_seen" {
		t.Errorf("CounterNames = %v, want the new counter last", names)
	}
	if len(res.Catalog.Sites) == 0 {
		t.Error("no sites: the required sites pass did not contribute")
	}
}

func TestPassOrder(t *testing.T) {
	mk := func(name string, req ...*Pass) *Pass { return &Pass{Name: name, Requires: req} }
	a := mk("a")
	b := mk("b", a)
	c := mk("c", b, a)
	names := func(ps []*Pass) string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		in   []*Pass
		want string
	}{
		{[]*Pass{c}, "a b c"},
		{[]*Pass{a, c}, "a b c"},
		{[]*Pass{mk("x"), c, a}, "x a b c"},
		{DefaultPasses(), "sites states sieve role partition observe"},
		{[]*Pass{SievePass, StatesPass}, "sites sieve states"},
	} {
		got, err := order(tc.in)
		if err != nil || names(got) != tc.want {
			t.Errorf("order(%s) = %s, %v; want %s", names(tc.in), names(got), err, tc.want)
		}
	}
	x, y := mk("x"), mk("y")
	x.Requires, y.Requires = []*Pass{y}, []*Pass{x}
	if _, err := order([]*Pass{x}); err == nil || !strings.Contains(err.Error(), "x → y → x") {
		t.Errorf("cycle: %v", err)
	}
}

func TestPassResultTypeChecked(t *testing.T) {
	bad := &Pass{Name: "bad", ResultType: reflect.TypeFor[*Sites](), Run: func(*Unit) (any, error) { return 3, nil }}
	_, err := Run(context.Background(), Options{Dir: appDir(t), Patterns: []string{"example.com/app/..."}, Passes: []*Pass{bad}})
	if err == nil || !strings.Contains(err.Error(), "pass bad returned a int") {
		t.Errorf("err %v", err)
	}
}

func TestUniqueNames(t *testing.T) {
	evs := []catalog.ErrorValue{
		pathErr("write", "EIO"), pathErr("write", "ENOSPC"), pathErr("sync", "EIO"),
		errnoErr("EIO"), errnoErr("EIO"),
	}
	uniqueNames(evs)
	var got []string
	for _, e := range evs {
		got = append(got, e.Name)
	}
	if want := "EIO ENOSPC EIO(sync) EIO#2 EIO#3"; strings.Join(got, " ") != want {
		t.Errorf("names = %q, want %q", strings.Join(got, " "), want)
	}
}

// TestAssemble: the catalog assemble makes from the passes' parts is
// complete when made — sites sorted by ID, observation points numbered, the
// role in place and everything in the hash — and duplicate IDs are refused.
func TestAssemble(t *testing.T) {
	pt := func() catalog.Parts {
		return catalog.Parts{
			Sites:         []catalog.Site{{ID: "p.b#0", Kind: catalog.KindError}, {ID: "p.a#0", Kind: catalog.KindDelay}},
			ObservePoints: []catalog.ObservePoint{{ID: "observe:p.send"}, {ID: "observe:p.handle"}},
			Role:          &catalog.Role{Pkg: "p", Type: "raft", Field: "state", Writes: []catalog.RoleWrite{{ID: "role:p.become#0"}}},
		}
	}
	cat, err := assemble("/m", pt())
	if err != nil {
		t.Fatal(err)
	}
	if cat.Module != "/m" || cat.Sites[0].ID != "p.a#0" || cat.Sites[0].Index != 0 || cat.Sites[1].Index != 1 {
		t.Errorf("sites not sorted and numbered: %+v", cat.Sites)
	}
	if cat.Observe(1) == nil || cat.Observe(1).Index != 1 || cat.Role == nil {
		t.Errorf("observation points %+v, role %+v", cat.ObservePoints, cat.Role)
	}
	if err := cat.Check(); err != nil || cat.Hash != cat.ComputeHash() {
		t.Errorf("hash %s, want %s (%v)", cat.Hash, cat.ComputeHash(), err)
	}
	for _, tc := range []struct {
		name string
		edit func(p *catalog.Parts)
		want string
	}{
		{"site", func(p *catalog.Parts) { p.Sites = append(p.Sites, catalog.Site{ID: "p.b#0"}) }, "two sites with ID p.b#0"},
		{"role write", func(p *catalog.Parts) {
			p.Role.Writes = append(p.Role.Writes, catalog.RoleWrite{ID: "role:p.become#0"})
		}, "two role writes with ID role:p.become#0"},
		{"observation point", func(p *catalog.Parts) {
			p.ObservePoints = append(p.ObservePoints, catalog.ObservePoint{ID: "observe:p.send"})
		}, "two observation points with ID observe:p.send"},
	} {
		p := pt()
		tc.edit(&p)
		if _, err := assemble("/m", p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("duplicate %s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestStatsJSONRoundTrip: the stats read back from their JSON are the
// stats written (build keeps an analysis this way), the zero counters
// MarshalJSON adds included.
func TestStatsJSONRoundTrip(t *testing.T) {
	s := Stats{Packages: []PackageStats{{Package: "p", Counts: Counts{CountErrorSites: 3}}}, Totals: Counts{CountErrorSites: 3, "x": 1}, Seconds: 1.5}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Stats
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(data) || back.Totals["x"] != 1 || back.Seconds != 1.5 || len(back.Packages) != 1 {
		t.Errorf("round trip:\n%s\n%s", data, again)
	}
}

// TestNextDiskCall: a site that can crash after its call names the next
// disk call of its function in source order (the window such a crash falls
// in ends there); the last one names none.
func TestNextDiskCall(t *testing.T) {
	res := runApp(t, appDir(t))
	byID := map[string]catalog.Site{}
	for _, s := range res.Catalog.Sites {
		byID[s.ID] = s
	}
	const st = "example.com/app/store."
	for id, want := range map[string]string{
		st + "Open:os.MkdirAll#0":                        "os.OpenFile",
		st + "Open:os.OpenFile#0":                        "",
		st + "(*Store).PutBatch:(*bufio.Writer).Write#0": "(*bufio.Writer).Flush",
		st + "(*Store).PutBatch:(*bufio.Writer).Flush#0": "",
	} {
		s, ok := byID[id]
		if !ok {
			t.Errorf("no site %s", id)
			continue
		}
		if s.Next != want {
			t.Errorf("%s: Next %q, want %q", id, s.Next, want)
		}
	}
}
