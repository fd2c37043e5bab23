package policy

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gofault/gofault/record"
)

// This file holds spread's call paths: the key of the way a request came
// to its site, what spread remembers of each, and how Explain names one.

const (
	// spreadDepth is how many caller frames make a request's call path.
	// Ten reach from a storage call up to the component that asked for it
	// (etcd's bbolt commit: three frames of the backend's buffered batch
	// transaction, then the backend's periodic run or ForceCommit, then
	// the compaction that called it) and stop short of the goroutine's
	// entry (a gRPC handler, a scheduler's closure), whose variety would
	// make every request's path its own.
	spreadDepth = 10
	// spreadPaths is how many paths of a site spread remembers: those a
	// trial reached last, and of those the ones most trials reached.
	spreadPaths = 32
)

// callPath returns the key of a request's call path: its spreadDepth
// caller frames below the site's own frame (the function that makes the
// site's call), without the function literals the instrumentation wraps
// around site calls (record.Wrapper, as record.CallerStack), hashed by
// their functions (the import path cut to its last element) and lines
// (FNV-1a). 0 means no path: the request has no stack (the plan asked for
// none, or an agent sent none). It walks the stack in place, once per
// request; pathCallers copies the frames where they are wanted.
func callPath(stack []record.Frame) uint64 {
	if len(stack) == 0 {
		return 0
	}
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	walkPath(stack, func(f record.Frame) {
		fn := f.Func[strings.LastIndexByte(f.Func, '/')+1:]
		for i := range len(fn) {
			h = (h ^ uint64(fn[i])) * prime
		}
		h *= prime // the function's end
		for line := uint64(f.Line) + 1; line > 0; line >>= 8 {
			h = (h ^ line&0xff) * prime
		}
		h *= prime // the frame's end
	})
	return max(h, 1)
}

// walkPath calls fn with each frame of a stack's call path (callPath),
// nearest first.
func walkPath(stack []record.Frame, fn func(record.Frame)) {
	own, n := false, 0
	for i := 0; i < len(stack) && n < spreadDepth; i++ {
		switch {
		case record.Wrapper(stack, i):
		case !own:
			own = true // the site's own frame
		default:
			fn(stack[i])
			n++
		}
	}
}

// pathHistory is what spread knows of one call path of a site from its
// last trials.
type pathHistory struct {
	reachHistory
	// Callers are the path's frames, nearest first, as "pkg.Func:line"
	// (the import path cut to its last element), by which Explain names
	// it (pathName).
	Callers []string `json:"callers"`
	// Targeted counts the trials that aimed at it, from the fewest of
	// the site's other paths' when it was first reached.
	Targeted int `json:"targeted,omitempty"`
	// Seen is the campaign's trial count (spreadMemory.Trials) when a
	// trial last reached it: the bound (trimPaths) keeps the paths seen
	// last.
	Seen int `json:"seen"`
}

// pathCallers returns the frames of a stack's call path (callPath) as
// pathHistory.Callers holds them.
func pathCallers(stack []record.Frame) []string {
	var out []string
	walkPath(stack, func(f record.Frame) {
		out = append(out, f.Func[strings.LastIndexByte(f.Func, '/')+1:]+":"+strconv.Itoa(f.Line))
	})
	return out
}

// trimPaths keeps a site's spreadPaths paths seen last (Seen), of those
// the ones most trials reached, the lower key first where that ties.
func trimPaths(paths map[uint64]*pathHistory) {
	if len(paths) <= spreadPaths {
		return
	}
	keys := slices.Collect(maps.Keys(paths))
	slices.SortFunc(keys, func(a, b uint64) int {
		pa, pb := paths[a], paths[b]
		return cmp.Or(cmp.Compare(pb.Seen, pa.Seen), cmp.Compare(pb.Trials, pa.Trials), cmp.Compare(a, b))
	})
	for _, k := range keys[spreadPaths:] {
		delete(paths, k)
	}
}

// pathName names a path of a site for Explain by where it parts from the
// site's other paths: the first of its callers no other path has at that
// depth, and that caller's own caller (or, for the path's outermost frame,
// the function it calls), outermost first, e.g.
// "…scheduleCompaction → ForceCommit" where a periodic commit is
// "run → Commit". Functions are named without their package and
// receiver, and with their line where another path has the same function
// there.
func pathName(p *pathHistory, all map[uint64]*pathHistory) string {
	if len(p.Callers) == 0 {
		return "no caller"
	}
	at := 0
	for _, o := range all {
		if o != p {
			at = max(at, parting(p.Callers, o.Callers))
		}
	}
	outer := min(at+1, len(p.Callers)-1)
	name := func(i int) string {
		fn, line, _ := strings.Cut(p.Callers[i], ":")
		for _, o := range all {
			if o != p && i < len(o.Callers) && o.Callers[i] != p.Callers[i] && strings.HasPrefix(o.Callers[i], fn+":") {
				return shortFunc(fn) + ":" + line
			}
		}
		return shortFunc(fn)
	}
	out := name(outer)
	if outer > 0 {
		out += " → " + name(outer-1)
	}
	if outer+1 < len(p.Callers) {
		out = "…" + out
	}
	return out
}

// parting returns the index of the first of a's frames that b does not
// have at the same depth: len(a) where a is b's or b is a's beginning,
// whichever is shorter.
func parting(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// shortFunc is a function's name without its package and receiver:
// "backend.(*backend).ForceCommit" is "ForceCommit", a function literal
// "mvcc.(*store).compact.func1" "compact.func1".
func shortFunc(fn string) string {
	if i := strings.LastIndex(fn, ")."); i >= 0 {
		return fn[i+2:]
	}
	if _, rest, ok := strings.Cut(fn, "."); ok {
		return rest
	}
	return fn
}

// fewestTargeted is the fewest turns (Targeted) of paths, 0 if none.
func fewestTargeted(paths map[uint64]*pathHistory) int {
	fewest := -1
	for _, p := range paths {
		if fewest < 0 || p.Targeted < fewest {
			fewest = p.Targeted
		}
	}
	return max(0, fewest)
}
