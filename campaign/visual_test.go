package campaign

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// TestWriteVisuals: a drawing is written where its verdict's evidence
// points; one that cannot be written turns that line into the error.
func TestWriteVisuals(t *testing.T) {
	dir := t.TempDir()
	vis := check.Visual{Checker: check.NameLinearizability, Name: "linearizability-a.html", Data: []byte("<html>")}
	p := filepath.Join(dir, vis.Name)
	tr := &record.Trial{Dir: dir, Verdicts: []record.Verdict{{Checker: check.NameLinearizability, Failed: true, Evidence: []string{"key a", "visualization: " + p}}}}
	writeVisuals(tr, []check.Visual{vis})
	if data, err := os.ReadFile(p); err != nil || string(data) != "<html>" {
		t.Fatalf("drawing %q, %v", data, err)
	}
	if got := tr.Verdicts[0].Evidence[1]; got != "visualization: "+p {
		t.Errorf("evidence %q changed", got)
	}

	gone := filepath.Join(dir, "gone")
	tr = &record.Trial{Dir: gone, Verdicts: []record.Verdict{{Checker: check.NameLinearizability, Failed: true,
		Evidence: []string{"key a", "visualization: " + filepath.Join(gone, vis.Name)}}}}
	writeVisuals(tr, []check.Visual{vis})
	if got := tr.Verdicts[0].Evidence[1]; !strings.HasPrefix(got, "visualization failed: ") {
		t.Errorf("evidence %q, want the write's error", got)
	}
}
