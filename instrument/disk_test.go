package instrument

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// TestRewriteDisk rewrites file reads and writes that can take a disk
// fault: the corrupted read runs and has its bytes altered after, the
// torn write is replaced by the agent's; a site whose bytes the hook
// cannot reach keeps its other kinds and says why (narrowed).
func TestRewriteDisk(t *testing.T) {
	src := `package p

import (
	"io"
	"os"
)

type store struct {
	f   *os.File
	buf []byte
}

func (s *store) load(name string) ([]byte, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(s.f, s.buf); err != nil {
		return nil, err
	}
	n, err := s.f.ReadAt(s.buf[:4], 8)
	_ = n
	return b, err
}

func (s *store) save(name string, b []byte) error {
	if _, err := s.f.Write(b); err != nil {
		return err
	}
	if _, err := s.f.WriteAt(b, 512); err != nil {
		return err
	}
	return os.WriteFile(name, b, 0o644)
}

func (s *store) copyTo(w io.Writer, r io.Reader) error {
	if _, err := r.Read(s.buf); err != nil {
		return err
	}
	_, err := w.Write(s.buf)
	return err
}

type pager struct {
	writeAt func([]byte, int64) (int, error)
}

func (p *pager) page(b []byte) error {
	_, err := p.writeAt(b, 4096)
	return err
}

func (s *store) meta() error {
	var buf [4096]byte
	_, err := s.f.Read(buf[:])
	return err
}
`
	callees := map[string]string{
		"os.ReadFile": "os.ReadFile", "io.ReadFull": "io.ReadFull", "s.f.ReadAt": "(*os.File).ReadAt",
		"s.f.Write": "(*os.File).Write", "s.f.WriteAt": "(*os.File).WriteAt", "os.WriteFile": "os.WriteFile",
		"r.Read": "(io.Reader).Read", "w.Write": "(io.Writer).Write",
		// A function value bound to a file's WriteAt (analysis
		// boundDiskCall: bolt's db.ops.writeAt).
		"p.writeAt": "(*os.File).WriteAt",
		"s.f.Read":  "(*os.File).Read",
	}
	fset, f, info, pkg := typecheck(t, src)
	var names []string
	for n := range callees {
		names = append(names, n)
	}
	sites := sitesAt(fset, f, catalog.KindError|catalog.KindDelay|catalog.KindCrash, names...)
	for _, s := range sites {
		fn := s.ID[:strings.Index(s.ID, "#")]
		s.Callee = callees[fn]
		if strings.Contains(s.Callee, "Write") {
			s.Kind |= catalog.KindTorn
		} else {
			s.Kind |= catalog.KindCorrupt
		}
	}
	out := rewriteFile(fileInput{src: []byte(src), file: f, fset: fset, info: info, pkg: pkg, lineName: "/src/p/p.go"}, sites)
	if len(out.skipped) != 0 {
		t.Fatalf("skipped %v", out.skipped)
	}
	narrowed := map[string]string{}
	for _, e := range out.edits {
		if e.narrowed != "" {
			narrowed[e.site.Callee] = e.narrowed
		}
	}
	// ReadAt's buffer s.buf[:4] is evaluated again after the call: not
	// plain, so that read keeps error, delay and crash only.
	want := map[string]string{"(*os.File).ReadAt": NarrowBuffer}
	if len(narrowed) != len(want) || narrowed["(*os.File).ReadAt"] != want["(*os.File).ReadAt"] {
		t.Fatalf("narrowed %v, want %v", narrowed, want)
	}
	for _, s := range sites {
		if s.Callee == "(*os.File).ReadAt" && s.Kind.Has(catalog.KindCorrupt) {
			t.Fatalf("ReadAt kept corrupt: %s", s.Kind)
		}
	}
	var errSites []*catalog.Site
	for _, e := range out.edits {
		if e.errBranch {
			errSites = append(errSites, e.site)
		}
	}
	files, err := errorFiles("p", "example.com/p", errSites, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkCompiles(t, out.src, files)
	text := string(out.src)
	for _, must := range []string{
		"gofaultagent.Corrupt(0, gofaultR0, name, gofaultP)",
		"gofaultagent.Corrupt(1, s.buf[:gofaultR0], \"\", gofaultP)",
		"gofaultagent.TearWrite(3, s.f, b, gofaultP)",
		"gofaultagent.TearWriteAt(4, s.f, b, 512, gofaultP)",
		"gofaultagent.TearFile(5, name, b, 0o644, gofaultP)",
		"gofaultagent.Corrupt(6, s.buf[:gofaultR0], \"\", gofaultP)",
		"gofaultagent.TearWrite(7, w, s.buf, gofaultP)",
		"gofaultagent.TearWriteAt(8, gofaultagent.WriterAtFunc(p.writeAt), b, 4096, gofaultP)",
		// An array sliced whole (bolt's meta page read at open).
		"gofaultagent.Corrupt(9, buf[:gofaultR0], ",
	} {
		if !strings.Contains(text, must) {
			t.Errorf("rewritten file lacks %s", must)
		}
	}
	if n, want := strings.Count(text, "\n"), strings.Count(src, "\n"); n != want {
		t.Errorf("rewritten file has %d lines, want %d", n, want)
	}
	golden(t, filepath.Join("testdata", "rewrite", "disk.golden"), out.src)
}
