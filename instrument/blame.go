package instrument

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
)

var errLine = regexp.MustCompile(`(?m)^(\S+\.go):(\d+)(?::\d+)?: .*$`)

// blame maps compiler errors in build output to the IDs of the sites whose
// rewritten code they lie in, each with its error lines (file:line: message).
func (ov *overlaySet) blame(w *Work, out string) map[string][]string {
	type span struct {
		id         string
		start, end int
	}
	byName := map[string][]span{}
	for name, edits := range ov.edits {
		ln := ov.lineNames[name]
		for _, e := range edits {
			id := ""
			if e.site != nil {
				id = e.site.ID
			} else if e.point != nil {
				id = e.point.ID
			} else if e.state != nil {
				id = e.state.ID
			} else if e.role != nil {
				id = e.role.ID
			} else if e.observe != nil {
				id = e.observe.ID
			} else if e.block {
				id = coverID(name)
			} else if e.ignored {
				id = ignoredID(name)
			}
			sp := span{id, e.startLine, e.endLine}
			byName[ln] = append(byName[ln], sp)
			byName[name] = append(byName[name], sp)
		}
	}
	for name, f := range ov.errFiles {
		for idx, r := range f.lineOf {
			id := ""
			for _, edits := range ov.edits {
				for _, e := range edits {
					if e.site != nil && e.site.Index == idx {
						id = e.site.ID
					}
				}
			}
			byName[name] = append(byName[name], span{id, r[0], r[1]})
		}
	}
	for name := range ov.added {
		byName[name] = append(byName[name], span{testMainPrefix + name, 1, 1 << 30})
	}
	// The compiler names the overlay's file where no //line directive
	// says otherwise (e.g. in generated error files).
	for target, file := range ov.written {
		byName[file] = append(byName[file], byName[target]...)
	}
	bad := map[string][]string{}
	for _, m := range errLine.FindAllStringSubmatch(out, -1) {
		file := m[1]
		if !filepath.IsAbs(file) {
			file = filepath.Join(w.ModuleDir, file)
		}
		line, _ := strconv.Atoi(m[2])
		for _, sp := range byName[filepath.Clean(file)] {
			if sp.id != "" && sp.start <= line && line <= sp.end && !slices.Contains(bad[sp.id], m[0]) {
				bad[sp.id] = append(bad[sp.id], m[0])
			}
		}
	}
	return bad
}
