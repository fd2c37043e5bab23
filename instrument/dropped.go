package instrument

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/gofault/gofault/catalog"
)

// Dropped is a site, state or timeout point of the analysis catalog that is
// not in the built binary, and why.
type Dropped struct {
	ID string `json:"id"`
	// What is "site", "state" or "timeout point".
	What string `json:"what"`
	// File and Line locate it in the files that were instrumented.
	File string `json:"file"`
	Line int    `json:"line"`
	// Reason is one of the Skip* reasons.
	Reason string `json:"reason"`
	// Errors are the compiler's messages (file:line: message) that made
	// the build drop it (Reason SkipCompile).
	Errors []string `json:"errors,omitempty"`
}

// Pos returns "file:line".
func (d Dropped) Pos() string { return fmt.Sprintf("%s:%d", d.File, d.Line) }

// DroppedFile is where Build keeps the list of what it dropped, in the work
// dir workDir (Work.Dir).
func DroppedFile(workDir string) string { return filepath.Join(workDir, "dropped.json") }

// LoadDropped reads the list written by Build; a missing file is an empty
// list.
func LoadDropped(file string) ([]Dropped, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dropped sites: %w", err)
	}
	var ds []Dropped
	if err := json.Unmarshal(data, &ds); err != nil {
		return nil, fmt.Errorf("dropped sites %s: %w", file, err)
	}
	return ds, nil
}

// dropped lists the IDs of skipped (ID -> reason) with their positions in
// cat and the compiler's messages of compileErrs, sorted by ID.
func dropped(cat *catalog.Catalog, skipped map[string]string, compileErrs map[string][]string) []Dropped {
	ds := make([]Dropped, 0, len(skipped))
	add := func(id, what, file string, line int) {
		if r, ok := skipped[id]; ok {
			ds = append(ds, Dropped{ID: id, What: what, File: file, Line: line, Reason: r, Errors: compileErrs[id]})
		}
	}
	for _, s := range cat.Sites {
		add(s.ID, "site", s.File, s.Line)
	}
	for _, s := range cat.States {
		add(s.ID, "state", s.File, s.Line)
	}
	for _, p := range cat.TimeoutPoints {
		add(p.ID, "timeout point", p.File, p.Line)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].ID < ds[j].ID })
	return ds
}

func writeDropped(file string, ds []Dropped) error {
	if ds == nil {
		ds = []Dropped{}
	}
	data, err := json.MarshalIndent(ds, "", "  ")
	if err != nil {
		return fmt.Errorf("dropped sites: %w", err)
	}
	if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("dropped sites: %w", err)
	}
	return nil
}
