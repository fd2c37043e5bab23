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

// Dropped is a program point of the analysis catalog (a site, timeout
// point, state, role write or observation point) that is not in the built
// binary, and why.
type Dropped struct {
	ID string `json:"id"`
	// What is "site", "timeout point", "state", "role write" or
	// "observation point"; "disk fault" for a site that is in the binary
	// without its disk fault kinds (corrupt, torn), which the hook cannot
	// carry out there (the Narrow* reasons).
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
// cat and the compiler's messages of compileErrs, sorted by ID: every
// program point, of all five lists.
func dropped(cat *catalog.Catalog, skipped map[string]string, compileErrs map[string][]string) []Dropped {
	ds := make([]Dropped, 0, len(skipped))
	ds = appendDropped(ds, cat.Sites, siteAt, "site", skipped, compileErrs)
	ds = appendDropped(ds, cat.TimeoutPoints, timeoutAt, "timeout point", skipped, compileErrs)
	ds = appendDropped(ds, cat.States, stateAt, "state", skipped, compileErrs)
	ds = appendDropped(ds, roleWrites(cat), roleWriteAt, "role write", skipped, compileErrs)
	ds = appendDropped(ds, cat.ObservePoints, observeAt, "observation point", skipped, compileErrs)
	sort.Slice(ds, func(i, j int) bool { return ds[i].ID < ds[j].ID })
	return ds
}

// WhatDisk is Dropped.What of a site kept without its disk fault kinds.
const WhatDisk = "disk fault"

// narrowedDisk lists the sites of cat that lost their disk fault kinds
// (ID -> reason), sorted by ID.
func narrowedDisk(cat *catalog.Catalog, narrowed map[string]string) []Dropped {
	var ds []Dropped
	for i := range cat.Sites {
		s := &cat.Sites[i]
		if r, ok := narrowed[s.ID]; ok {
			ds = append(ds, Dropped{ID: s.ID, What: WhatDisk, File: s.File, Line: s.Line, Reason: r})
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].ID < ds[j].ID })
	return ds
}

// appendDropped appends to ds the items of one list (what) that skipped
// names.
func appendDropped[T any](ds []Dropped, items []T, at func(*T) place, what string, skipped map[string]string, compileErrs map[string][]string) []Dropped {
	for i := range items {
		p := at(&items[i])
		if r, ok := skipped[p.id]; ok {
			ds = append(ds, Dropped{ID: p.id, What: what, File: *p.file, Line: p.line, Reason: r, Errors: compileErrs[p.id]})
		}
	}
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
