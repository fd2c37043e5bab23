package instrument

import (
	"path/filepath"

	"github.com/gofault/gofault/catalog"
)

// A catalog holds five lists of program points that a build rewrites:
// sites, timeout points, states, role writes and observation points. Each
// is placed in files the same way — moved from the module cache to the work
// dir's copies (localize), grouped by file (byFile), skipped where its file
// was not loaded (loadedOnly) and listed when dropped (dropped.go) —
// through the generic helpers below and one accessor per list (siteAt,
// timeoutAt, ...).

// place is what the helpers read of a program point: its ID, its package,
// its file (a pointer, so that localize can move it) and line.
type place struct {
	id, pkg string
	file    *string
	line    int
}

func siteAt(s *catalog.Site) place { return place{s.ID, s.Pkg, &s.File, s.Line} }

func timeoutAt(p *catalog.TimeoutPoint) place { return place{p.ID, p.Pkg, &p.File, p.Line} }

func stateAt(s *catalog.State) place { return place{s.ID, s.Pkg, &s.File, s.Line} }

func roleWriteAt(w *catalog.RoleWrite) place { return place{w.ID, w.Pkg, &w.File, w.Line} }

func observeAt(p *catalog.ObservePoint) place { return place{p.ID, p.Pkg, &p.File, p.Line} }

// roleWrites returns cat's role writes, none when it has no role.
func roleWrites(cat *catalog.Catalog) []catalog.RoleWrite {
	if cat.Role == nil {
		return nil
	}
	return cat.Role.Writes
}

// roleValues returns the values of cat's role, none when it has no role.
func roleValues(cat *catalog.Catalog) []catalog.RoleValue {
	if cat.Role == nil {
		return nil
	}
	return cat.Role.Values
}

// localize returns cat with the files of its program points in the module
// cache moved to the work dir's copies of their modules. cat is not
// changed.
func localize(cat *catalog.Catalog, w *Work) *catalog.Catalog {
	c := *cat
	c.Sites = localized(cat.Sites, siteAt, w)
	c.TimeoutPoints = localized(cat.TimeoutPoints, timeoutAt, w)
	c.ObservePoints = localized(cat.ObservePoints, observeAt, w)
	c.States = localized(cat.States, stateAt, w)
	if cat.Role != nil {
		r := *cat.Role
		r.Writes = localized(r.Writes, roleWriteAt, w)
		c.Role = &r
	}
	return &c
}

// localized returns a copy of items (nil when empty) with their files
// moved by w.CopyPath.
func localized[T any](items []T, at func(*T) place, w *Work) []T {
	out := append([]T(nil), items...)
	for i := range out {
		f := at(&out[i]).file
		*f = w.CopyPath(*f)
	}
	return out
}

// byFile groups pointers to items by the clean name of their file, each
// group in list order.
func byFile[T any](items []T, at func(*T) place) map[string][]*T {
	m := map[string][]*T{}
	for i := range items {
		p := &items[i]
		f := filepath.Clean(*at(p).file)
		m[f] = append(m[f], p)
	}
	return m
}

// loadedOnly groups items by file (byFile) and keeps the groups of the
// files that loaded holds, marking those files in touched; every item of
// another file is skipped with reason (an ID -> reason entry of skipped).
func loadedOnly[T any](items []T, at func(*T) place, loaded map[string]fileRef, reason string, skipped map[string]string, touched map[string]bool) map[string][]*T {
	groups := byFile(items, at)
	for f, its := range groups {
		if _, ok := loaded[f]; !ok {
			for _, it := range its {
				skipped[at(it).id] = reason
			}
			delete(groups, f)
			continue
		}
		touched[f] = true
	}
	return groups
}

// addPackages appends to paths the packages of items not yet seen (and
// not empty), marking them seen.
func addPackages[T any](paths []string, seen map[string]bool, items []T, at func(*T) place) []string {
	for i := range items {
		if p := at(&items[i]).pkg; p != "" && !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	return paths
}
