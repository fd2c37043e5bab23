package analysis

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/gofault/gofault/catalog"
)

// WriteSites writes a readable rendering of the catalog's sites, one block
// per site: index, ID, kinds, I/O class, callee, position (relative to base
// when base is not empty), then one line per error value.
func WriteSites(w io.Writer, cat *catalog.Catalog, base string) error {
	for _, s := range cat.Sites {
		file := s.File
		if base != "" {
			if rel, err := filepath.Rel(base, s.File); err == nil {
				file = filepath.ToSlash(rel)
			}
		}
		io := s.IO
		if io == "" {
			io = "-"
		}
		if _, err := fmt.Fprintf(w, "%d %s\n\tkind=%s io=%s callee=%s at %s:%d:%d\n",
			s.Index, s.ID, s.Kind.String(), io, s.Callee, file, s.Line, s.Col); err != nil {
			return err
		}
		for _, e := range s.Errors {
			if _, err := fmt.Fprintf(w, "\t%s = %s  [%s]\n", e.Name, e.Expr, strings.Join(e.Imports, " ")); err != nil {
				return err
			}
		}
	}
	return nil
}
