package catalog

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Text renderings of a catalog for humans (gofault analyze --sites and
// --states) and for golden tests.

// WriteSites writes a readable rendering of the catalog's sites, one block
// per site: index, ID, kinds, I/O class, callee, position (relative to base
// when base is not empty), then one line per error value.
func WriteSites(w io.Writer, cat *Catalog, base string) error {
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

// WriteStates writes the per-task listing of the catalog's states for
// humans: one line per task with states, then one line per state with its
// index, condition and position (relative to base when not empty).
func WriteStates(w io.Writer, cat *Catalog, base string) error {
	byTask := map[uint32][]State{}
	for _, st := range cat.States {
		byTask[st.Task] = append(byTask[st.Task], st)
	}
	for _, t := range cat.Tasks {
		sts := byTask[t.Index]
		if len(sts) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "task %d %s (%d states)\n", t.Index, t.ID, len(sts)); err != nil {
			return err
		}
		for _, st := range sts {
			file := st.File
			if base != "" {
				if rel, err := filepath.Rel(base, st.File); err == nil {
					file = filepath.ToSlash(rel)
				}
			}
			inst := st.Inst
			if inst == "" {
				inst = "-"
			}
			if _, err := fmt.Fprintf(w, "\tstate %d %s\n\t\t%s  inst=%s at %s:%d:%d\n", st.Index, st.ID, st.Cond, inst, file, st.Line, st.Col); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteRole writes the catalog's role field for humans: the field (and
// the role method it was named by), its values, and one line per write
// with its shape and position (relative to base when not empty); or a
// line saying no role was found.
func WriteRole(w io.Writer, cat *Catalog, base string) error {
	r := cat.Role
	if r == nil {
		_, err := fmt.Fprintln(w, "role: none found (set target.role: pkg/path.Type.field to name it)")
		return err
	}
	var vs []string
	for _, v := range r.Values {
		vs = append(vs, fmt.Sprintf("%s=%d", v.Name, v.Value))
	}
	via := ""
	if r.Method != "" {
		via = " (read by " + r.Method + ")"
	}
	if _, err := fmt.Fprintf(w, "role: %s%s (%s: %s), %d writes\n", r, via, r.RoleType, strings.Join(vs, " "), len(r.Writes)); err != nil {
		return err
	}
	for _, wr := range r.Writes {
		file := wr.File
		if base != "" {
			if rel, err := filepath.Rel(base, wr.File); err == nil {
				file = filepath.ToSlash(rel)
			}
		}
		if _, err := fmt.Fprintf(w, "\t%s %s at %s:%d:%d\n", wr.ID, wr.Shape, file, wr.Line, wr.Col); err != nil {
			return err
		}
	}
	return nil
}
