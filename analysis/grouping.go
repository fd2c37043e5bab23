package analysis

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"

	"github.com/gofault/gofault/catalog"
	"golang.org/x/tools/go/ssa"
)

// Counter names of the Sieve pass (SievePass).
const (
	// CountLockHeldSites counts I/O sites reached while a mutex is held.
	CountLockHeldSites = "lock_held_sites"
	// CountBarrierSites counts I/O sites run while a barrier is pending.
	CountBarrierSites = "barrier_sites"
	// CountTimeoutSites counts I/O sites guarded by a timeout.
	CountTimeoutSites = "timeout_sites"
	// CountSieveSites counts the union of lock-held, barrier and timeout
	// sites, before grouping.
	CountSieveSites = "sieve_sites"
	// CountGroupedSites counts the representatives (one per basic block)
	// among the Sieve sites: the sites a Sieve policy injects at.
	CountGroupedSites = "grouped_sites"
	// CountTimeoutPoints counts the timeout expressions the instrumenter
	// wraps to capture their values.
	CountTimeoutPoints = "timeout_points"
	// CountTimeoutUncaptured counts deadlines (WithDeadline, SetDeadline)
	// that guard I/O but are not of the form time.Now().Add(d), so no
	// duration can be captured.
	CountTimeoutUncaptured = "timeout_uncaptured"
)

// SieveCounters are the counters of SievePass, in table order.
var SieveCounters = []string{CountLockHeldSites, CountBarrierSites, CountTimeoutSites, CountSieveSites,
	CountGroupedSites, CountTimeoutPoints, CountTimeoutUncaptured}

// SievePass annotates the I/O sites found by SitesPass with the contexts
// Sieve injects delays in: lock-held I/O (LockHeld), barrier-pending I/O
// (Barrier) and timeout-protected I/O (Timeout, Timeouts, with the timeout
// expressions as catalog.TimeoutPoints), then groups the sites by basic
// block (Block, Rep). It creates no sites: it reads SitesPass's result and
// returns *Sieve, its annotations of those sites.
var SievePass = &Pass{
	Name:       "sieve",
	Doc:        "lock-held, barrier-pending and timeout-protected I/O sites, grouped by basic block",
	Requires:   []*Pass{SitesPass},
	ResultType: reflect.TypeFor[*Sieve](),
	Run:        runSieve,
}

// Sieve is the result of SievePass: SitesPass's sites with Sieve's
// annotations (LockHeld, Barrier, Timeout, Timeouts, Block, Rep), in the
// same order, and the timeout points the Timeouts name.
type Sieve struct {
	Sites         []catalog.Site
	TimeoutPoints []catalog.TimeoutPoint
}

// contribute sets Sieve's annotations on the sites SitesPass contributed
// (in the same order: the driver runs SievePass after it) and adds the
// timeout points, which come first in the catalog's.
func (r *Sieve) contribute(p *catalog.Parts) {
	for i := range r.Sites {
		a, s := &r.Sites[i], &p.Sites[i]
		s.LockHeld, s.Barrier, s.Timeout, s.Block, s.Rep = a.LockHeld, a.Barrier, a.Timeout, a.Block, a.Rep
		s.Timeouts = slices.Clone(a.Timeouts)
	}
	p.TimeoutPoints = append(p.TimeoutPoints, r.TimeoutPoints...)
}

// calleeDepth bounds how deep the call graph is followed from a call made
// in a locked region, before a barrier or with a timeout context: deep
// enough for wrappers (encoder → writer → file), shallow enough to stay
// precise and fast.
const calleeDepth = 3

// maxFanout is the most callees a dynamic call may have and still be
// followed; wider interface calls are too imprecise to attribute.
const maxFanout = 4

// sieve holds what the Sieve sub-passes share: the I/O sites by call
// instruction and the copy of the sites being annotated.
type sieve struct {
	p       *Program
	u       *Unit
	sites   []catalog.Site                // a copy of SitesPass's, annotated
	tpoints []catalog.TimeoutPoint        // the timeout points, in index order
	funcs   []*ssa.Function               // target functions, in order
	site    map[*ssa.Call]int             // I/O site call -> index in sites
	calls   map[*ssa.Function][]*ssa.Call // I/O site calls of a function, in order
	// within memoizes sitesWithin.
	within map[withinKey][]int
	// points are the timeout expressions found, by position.
	points map[token.Pos]*point
	// guards are the timeout points of each guarded site (-1 for a
	// timeout with no capturable point).
	guards map[int]map[*point]bool
}

type withinKey struct {
	f     *ssa.Function
	depth int
}

func runSieve(u *Unit) (any, error) {
	ctx, p := u.Context, u.Prog
	found := u.ResultOf[SitesPass].(*Sites)
	s := &sieve{p: p, u: u, sites: slices.Clone(found.List), site: map[*ssa.Call]int{}, calls: map[*ssa.Function][]*ssa.Call{},
		within: map[withinKey][]int{}, points: map[token.Pos]*point{}, guards: map[int]map[*point]bool{}}
	for _, sp := range p.Targets {
		s.funcs = append(s.funcs, targetFunctions(sp)...)
	}
	for _, f := range s.funcs {
		for _, b := range f.Blocks {
			for _, in := range b.Instrs {
				c, ok := in.(*ssa.Call)
				if !ok {
					continue
				}
				if i, ok := found.At(c); ok && s.sites[i].IO != "" {
					s.site[c] = i
					s.calls[f] = append(s.calls[f], c)
				}
			}
		}
	}
	taint := s.contexts()
	for _, f := range s.funcs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.locks(f)
		s.barriers(f)
		s.timeouts(f, taint)
	}
	s.finishPoints()
	s.group()
	return &Sieve{Sites: s.sites, TimeoutPoints: s.tpoints}, nil
}

// sitesWithin returns the I/O sites of f and of the functions it calls,
// up to depth levels of calls below f.
func (s *sieve) sitesWithin(f *ssa.Function, depth int) []int {
	k := withinKey{f, depth}
	if r, ok := s.within[k]; ok {
		return r
	}
	s.within[k] = nil // cuts recursion
	seen := map[int]bool{}
	var out []int
	add := func(is ...int) {
		for _, i := range is {
			if !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	for _, c := range s.calls[f] {
		add(s.site[c])
	}
	if depth > 0 {
		for _, b := range f.Blocks {
			for _, in := range b.Instrs {
				if c, ok := in.(*ssa.Call); ok {
					add(s.calleeSites(c, depth-1)...)
				}
			}
		}
	}
	s.within[k] = out
	return out
}

// calleeSites returns the I/O sites in the functions call c may call, up
// to depth further levels.
func (s *sieve) calleeSites(c ssa.CallInstruction, depth int) []int {
	fs := s.p.Callees(c)
	if len(fs) > maxFanout {
		return nil
	}
	var out []int
	for _, g := range fs {
		if g.Blocks == nil {
			continue
		}
		out = append(out, s.sitesWithin(g, depth)...)
	}
	return out
}

// reached returns the I/O sites call c is or reaches through its callees.
func (s *sieve) reached(c *ssa.Call) []int {
	var out []int
	if i, ok := s.site[c]; ok {
		out = append(out, i)
	}
	return append(out, s.calleeSites(c, calleeDepth-1)...)
}

// group sets Block and Rep on every I/O site: sites in one basic block
// share a Block ID, and the representative is the last Sieve site of the
// block (lock-held, barrier or timeout), or the last I/O site when the
// block has none. It then counts the Sieve sites before and after.
func (s *sieve) group() {
	for _, f := range s.funcs {
		byBlock := map[*ssa.BasicBlock][]*ssa.Call{}
		var order []*ssa.BasicBlock
		for _, c := range s.calls[f] {
			b := groupBlock(c.Block())
			if byBlock[b] == nil {
				order = append(order, b)
			}
			byBlock[b] = append(byBlock[b], c)
		}
		for _, b := range order {
			cs := byBlock[b] // in instruction order
			rep := cs[len(cs)-1]
			for _, c := range cs {
				if sieveSite(&s.sites[s.site[c]]) {
					rep = c
				}
			}
			r := &s.sites[s.site[rep]]
			id := r.Pkg + "." + r.Func + "@" + strings.TrimPrefix(r.ID, r.Pkg+"."+r.Func+":")
			for _, c := range cs {
				st := &s.sites[s.site[c]]
				st.Block = id
				st.Rep = c == rep
			}
		}
	}
	for i := range s.sites {
		st := &s.sites[i]
		if st.IO == "" {
			continue
		}
		for _, c := range []struct {
			name string
			on   bool
		}{
			{CountLockHeldSites, st.LockHeld},
			{CountBarrierSites, st.Barrier},
			{CountTimeoutSites, st.Timeout},
			{CountSieveSites, sieveSite(st)},
			{CountGroupedSites, sieveSite(st) && st.Rep},
		} {
			if c.on {
				s.u.Count(st.Pkg, c.name, 1)
			}
		}
	}
}

// groupBlock returns the first block of the basic block b belongs to when
// error exits do not end blocks. Sieve groups by Java basic blocks, where
// an exception leaves through an exceptional edge; in Go the same exit is
// an "if err != nil { return }" that splits the block. So a block whose
// only predecessor ends in a branch on an error value whose other arm
// returns (or panics) continues its predecessor's block, as does a block
// whose only predecessor jumps to it.
func groupBlock(b *ssa.BasicBlock) *ssa.BasicBlock {
	for seen := 0; seen < len(b.Parent().Blocks); seen++ {
		if len(b.Preds) != 1 {
			return b
		}
		p := b.Preds[0]
		switch last := p.Instrs[len(p.Instrs)-1].(type) {
		case *ssa.Jump:
		case *ssa.If:
			other := p.Succs[0]
			if other == b {
				other = p.Succs[1]
			}
			if !errorCheck(last.Cond) || !exits(other) {
				return b
			}
		default:
			return b
		}
		b = p
	}
	return b
}

// errorCheck reports whether a branch condition compares an error with nil.
func errorCheck(v ssa.Value) bool {
	cmp, ok := v.(*ssa.BinOp)
	if !ok || (cmp.Op != token.EQL && cmp.Op != token.NEQ) {
		return false
	}
	errT := types.Universe.Lookup("error").Type()
	return types.Identical(cmp.X.Type(), errT) || types.Identical(cmp.Y.Type(), errT)
}

// exits reports whether a block leaves the function: it returns or panics,
// directly or after one jump.
func exits(b *ssa.BasicBlock) bool {
	for range 2 {
		switch b.Instrs[len(b.Instrs)-1].(type) {
		case *ssa.Return, *ssa.Panic:
			return true
		case *ssa.Jump:
			b = b.Succs[0]
		default:
			return false
		}
	}
	return false
}

// sieveSite reports whether a site is one Sieve injects delays at.
func sieveSite(st *catalog.Site) bool { return st.LockHeld || st.Barrier || st.Timeout }

// reachesFrom reports whether instruction b can run after instruction a in
// their function: later in the same block, or in a block reachable from
// a's block.
func reachesFrom(a, b ssa.Instruction) bool {
	return reaches(a, b, false)
}

// reachesForward is reachesFrom without loop back edges (edges to a block
// that dominates their source): b runs after a in the same iteration.
func reachesForward(a, b ssa.Instruction) bool {
	return reaches(a, b, true)
}

func reaches(a, b ssa.Instruction, forward bool) bool {
	ab, bb := a.Block(), b.Block()
	if ab == bb && index(a) < index(b) {
		return true
	}
	seen := map[*ssa.BasicBlock]bool{}
	var stack []*ssa.BasicBlock
	push := func(from *ssa.BasicBlock) {
		for _, x := range from.Succs {
			if !forward || !x.Dominates(from) {
				stack = append(stack, x)
			}
		}
	}
	push(ab)
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[x] {
			continue
		}
		if x == bb {
			return true
		}
		seen[x] = true
		push(x)
	}
	return false
}

func index(in ssa.Instruction) int {
	for i, x := range in.Block().Instrs {
		if x == in {
			return i
		}
	}
	return -1
}

// valueKey names the object a value denotes, so that two SSA values for
// the same mutex or connection compare equal: the same value, the same
// field of the same base, or loads of the same address.
func valueKey(v ssa.Value) string {
	switch v := v.(type) {
	case *ssa.FieldAddr:
		return valueKey(v.X) + "." + itoa(v.Field)
	case *ssa.Field:
		return valueKey(v.X) + "." + itoa(v.Field)
	case *ssa.UnOp:
		if v.Op == token.MUL {
			return "*" + valueKey(v.X)
		}
	case *ssa.ChangeInterface:
		return valueKey(v.X)
	case *ssa.MakeInterface:
		return valueKey(v.X)
	case *ssa.ChangeType:
		return valueKey(v.X)
	case *ssa.Global:
		return "g:" + v.String()
	}
	return fmt.Sprintf("%p", v)
}

// rootSyntax returns the declaration holding f: closures are searched in
// their enclosing function's syntax.
func rootSyntax(f *ssa.Function) ast.Node {
	for f.Parent() != nil {
		f = f.Parent()
	}
	return f.Syntax()
}

// syntaxCall returns the call expression of f's source whose "(" is at
// lparen, or nil.
func syntaxCall(f *ssa.Function, lparen token.Pos) *ast.CallExpr {
	var found *ast.CallExpr
	if root := rootSyntax(f); root != nil {
		ast.Inspect(root, func(n ast.Node) bool {
			if found != nil || n == nil {
				return false
			}
			if c, ok := n.(*ast.CallExpr); ok && c.Lparen == lparen {
				found = c
				return false
			}
			return n.Pos() <= lparen && lparen < n.End()
		})
	}
	return found
}

// syntaxBinary returns the binary expression of f's source whose operator
// is at op, or nil.
func syntaxBinary(f *ssa.Function, op token.Pos) *ast.BinaryExpr {
	var found *ast.BinaryExpr
	if root := rootSyntax(f); root != nil {
		ast.Inspect(root, func(n ast.Node) bool {
			if found != nil || n == nil {
				return false
			}
			if b, ok := n.(*ast.BinaryExpr); ok && b.OpPos == op {
				found = b
				return false
			}
			return n.Pos() <= op && op < n.End()
		})
	}
	return found
}
