package instrument

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gofault/gofault/catalog"
)

// agentAlias is the name rewritten files import the agent under; it cannot
// clash with a user identifier in practice, and gofault's own names all
// start with "gofault".
const agentAlias = "gofaultagent"

// Skip reasons, as counted in Stats.Skipped.
const (
	SkipNotFound    = "call not found"
	SkipGoDefer     = "go/defer call"
	SkipCgo         = "cgo file"
	SkipNoErrResult = "no error result"
	SkipUnnameable  = "result type not nameable"
	SkipErrImport   = "error value not importable"
	SkipCompile     = "compile error"
	SkipNoType      = "no type information"
)

// siteEdit is one rewritten site: the text inserted before and after the
// call, and where the call lies in the original file.
type siteEdit struct {
	site *catalog.Site
	// point is set instead of site for a wrapped timeout expression
	// (see timeoutEdits).
	point *catalog.TimeoutPoint
	// state is set instead of site for an abstract state's hook (see
	// stateEdits).
	state *catalog.State
	// role is set instead of site for a role write's hook (see
	// roleEdits).
	role *catalog.RoleWrite
	// observe is set instead of site for an observation point's hook
	// (see observeEdits).
	observe *catalog.ObservePoint
	// block is set instead of site for a coverage counter (see
	// blockEdits); it goes before any other text at its offset.
	block      bool
	start, end int // byte offsets of the call expression
	prefix     string
	suffix     string
	// lparen, when > 0, is the offset of the call's "(", replaced by
	// lparenText (go and defer calls only).
	lparen     int
	lparenText string
	startLine  int
	endLine    int
	errBranch  bool
	// narrowed, when set, says why the site lost its disk fault kinds
	// (diskEdit): it keeps the others.
	narrowed string
	// member is set instead of site for a member type's method hook
	// (memberHook) or receiver name (memberNamed); see memberEdits.
	member int
	// stack is set instead of site for a runtime.Stack call wrapped by
	// the agent (see stackEdits).
	stack bool
	// ignored is set instead of site for a test file's call whose error
	// the test discards, wrapped by the agent (see ignoredEdits).
	ignored bool
	// ran is set with ignored for a call of testing.M's Run, wrapped by
	// the agent (see ranEdits).
	ran bool
	// setup is set instead of site for the hook at the entry of a test
	// setup function (see setupEdits): the pattern it matched.
	setup string
}

// fileInput is what rewriteFile needs about one Go file.
type fileInput struct {
	src  []byte
	file *ast.File
	fset *token.FileSet
	info *types.Info
	pkg  *types.Package
	// lineName is the file name //line directives name: the file the
	// source was copied from, or the file itself.
	lineName string
	// renamed says the file sits at another path than lineName, so the
	// output starts with a //line directive.
	renamed bool
	// imports reports whether package from imports package to, directly
	// or not; nil means never (no cycle check).
	imports func(from, to string) bool
	// timeouts are the timeout points of the file (see timeoutEdits).
	timeouts []*catalog.TimeoutPoint
	// states are the abstract states of the file (see stateEdits).
	states []*catalog.State
	// roles are the role writes of the file, roleValues the role's values
	// (see roleEdits).
	roles      []*catalog.RoleWrite
	roleValues []catalog.RoleValue
	// observe are the observation points of the file (see observeEdits).
	observe []*catalog.ObservePoint
	// cover asks for coverage counters (see blockEdits), numbered from
	// firstBlock.
	cover      bool
	firstBlock int
	// member is the member type whose methods get the member hook (see
	// memberEdits), nil for none.
	member *memberType
	// sendPeers are the rules of the transport's send sites
	// (catalog.PeerSend, see sendEdits), by site ID.
	sendPeers map[string]sendRule
	// stacks asks for the file's runtime.Stack calls to be wrapped (a
	// test build; see stackEdits).
	stacks bool
	// ignored asks for the file's calls whose error is discarded to be
	// wrapped (a _test.go file of the package under test in a test build;
	// see ignoredEdits).
	ignored bool
	// setup are the patterns of the test setup functions whose entry is
	// hooked (a _test.go file of the package under test in a test build;
	// see setupEdits).
	setup []string
}

// fileOutput is a rewritten file and what happened to its sites.
type fileOutput struct {
	src     []byte
	edits   []siteEdit
	skipped map[uint32]string
	// skippedPoints are the timeout points not wrapped, by ID.
	skippedPoints map[string]string
	// skippedStates are the states not hooked, by ID.
	skippedStates map[string]string
	// skippedRoles are the role writes not hooked, by ID.
	skippedRoles map[string]string
	// skippedObserve are the observation points not hooked, by ID.
	skippedObserve map[string]string
	// blocks are the lines of the blocks counted, in index order.
	blocks []int
	// blankMembers counts the member type's methods left without a hook
	// (a "_" receiver).
	blankMembers int
}

// rewriteFile rewrites the calls of sites in one file. Each call whose site
// can take an error becomes
//
//	func() (gofaultZ0 T1, _ error) { if k := gofaultagent.Fault(N); k != 0 { return gofaultZ0, gofaultErrN(k) }; return CALL }()
//
// and each delay/crash-only site becomes
//
//	func() (T1, ...) { gofaultagent.Fault(N); return CALL }()
//
// CALL is the original text, preceded by a /*line*/ directive so that its
// positions (and thus panics and stack traces) keep their original file,
// line and column. No newline is inserted, so every other line keeps its
// number too. The call of a go or defer statement gets the hook in a
// different form; see editDeferred. A type the site's scope shadows (a
// parameter named like a type) is named through an alias declared at the
// end of the file; see qualifier.typeString.
func rewriteFile(in fileInput, sites []*catalog.Site) fileOutput {
	out := fileOutput{skipped: map[uint32]string{}}
	tf := in.fset.File(in.file.Pos())
	var sends []*catalog.Site
	sites = slices.DeleteFunc(slices.Clone(sites), func(s *catalog.Site) bool {
		if s.Peer == catalog.PeerSend {
			sends = append(sends, s)
			return true
		}
		return false
	})
	want := map[[2]int]*catalog.Site{}
	for _, s := range sites {
		want[[2]int{s.Line, s.Col}] = s
	}
	if isCgo(in.file) {
		for _, s := range sites {
			out.skipped[s.Index] = SkipCgo
		}
		_, out.skippedPoints = timeoutEdits(in, nil, in.timeouts)
		_, out.skippedStates = stateEdits(in, in.states)
		_, out.skippedRoles = roleEdits(in, in.roles)
		_, out.skippedObserve = observeEdits(in, in.observe)
		for _, s := range sends {
			out.skipped[s.Index] = SkipCgo
		}
		return out
	}
	deferred := map[*ast.CallExpr]bool{}
	found := map[uint32]bool{}
	q := newQualifier(in.pkg)
	ast.Inspect(in.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			deferred[n.Call] = true
		case *ast.DeferStmt:
			deferred[n.Call] = true
		case *ast.CallExpr:
			p := tf.Position(n.Lparen)
			s := want[[2]int{p.Line, p.Column}]
			if s == nil {
				return true
			}
			found[s.Index] = true
			edit := editCall
			if deferred[n] {
				edit = editDeferred
			}
			e, reason := edit(in, q, n, s)
			if reason != "" {
				out.skipped[s.Index] = reason
				return true
			}
			out.edits = append(out.edits, e)
		}
		return true
	})
	for _, s := range sites {
		if !found[s.Index] {
			out.skipped[s.Index] = SkipNotFound
		}
	}
	var pe []siteEdit
	pe, out.skippedPoints = timeoutEdits(in, q, in.timeouts)
	out.edits = append(out.edits, pe...)
	var se []siteEdit
	se, out.skippedStates = stateEdits(in, in.states)
	out.edits = append(out.edits, se...)
	var re []siteEdit
	re, out.skippedRoles = roleEdits(in, in.roles)
	out.edits = append(out.edits, re...)
	var oe []siteEdit
	oe, out.skippedObserve = observeEdits(in, in.observe)
	out.edits = append(out.edits, oe...)
	var me []siteEdit
	me, out.blankMembers = memberEdits(in, in.member)
	out.edits = append(out.edits, me...)
	se, skippedSends := sendEdits(in, sends)
	out.edits = append(out.edits, se...)
	maps.Copy(out.skipped, skippedSends)
	if in.stacks {
		out.edits = append(out.edits, stackEdits(in)...)
	}
	if in.ignored {
		out.edits = append(out.edits, ignoredEdits(in)...)
		out.edits = append(out.edits, ranEdits(in)...)
	}
	out.edits = append(out.edits, setupEdits(in)...)
	if in.cover {
		var be []siteEdit
		be, out.blocks = blockEdits(in, in.firstBlock)
		out.edits = append(out.edits, be...)
	}
	if len(out.edits) == 0 {
		return out
	}
	out.src = apply(in, q, out.edits)
	return out
}

// editCall builds the edit for one call, or returns why it cannot.
func editCall(in fileInput, q *qualifier, call *ast.CallExpr, s *catalog.Site) (siteEdit, string) {
	tv, ok := in.info.Types[call.Fun]
	if !ok || tv.Type == nil || tv.IsType() || tv.IsBuiltin() {
		return siteEdit{}, SkipNoType
	}
	sig, ok := tv.Type.Underlying().(*types.Signature)
	if !ok {
		return siteEdit{}, SkipNoType
	}
	res := sig.Results()
	errBranch := s.Kind.Has(catalog.KindError) && len(s.Errors) > 0
	hookOnly := s.Kind&(catalog.KindDelay|catalog.KindCrash) != 0
	if errBranch && (res.Len() == 0 || !types.Identical(res.At(res.Len()-1).Type(), types.Universe.Lookup("error").Type())) {
		if !hookOnly {
			return siteEdit{}, SkipNoErrResult
		}
		errBranch = false
	}
	if errBranch && !errorsImportable(in.pkg.Path(), s.Errors, in.imports) {
		if !hookOnly {
			return siteEdit{}, SkipErrImport
		}
		errBranch = false
	}
	if !errBranch && !hookOnly {
		return siteEdit{}, SkipNoErrResult
	}
	// Name the result types through a trial qualifier, so that a site
	// that cannot be named adds no imports.
	trial := q.trial()
	scope := in.pkg.Scope().Innermost(call.Pos())
	names := make([]string, res.Len())
	for i := range names {
		t := res.At(i).Type()
		if !trial.nameable(t) {
			return siteEdit{}, SkipUnnameable
		}
		var ok bool
		if names[i], ok = trial.typeString(t, scope, call.Pos(), s.Index); !ok {
			return siteEdit{}, SkipUnnameable
		}
	}
	q.commit(trial)

	start := in.fset.Position(call.Pos())
	end := in.fset.Position(call.End())
	// With an error branch and other results, the results are named: the
	// branch returns their zero values without naming a builtin (new) that
	// the site's code may shadow.
	results := names
	if errBranch && len(names) > 1 {
		results = make([]string, len(names))
		for i, n := range names[:len(names)-1] {
			results[i] = fmt.Sprintf("gofaultZ%d %s", i, n)
		}
		results[len(names)-1] = "_ " + names[len(names)-1]
	}
	var b strings.Builder
	b.WriteString("func() ")
	switch len(names) {
	case 0:
	case 1:
		b.WriteString(names[0] + " ")
	default:
		b.WriteString("(" + strings.Join(results, ", ") + ") ")
	}
	idx := strconv.FormatUint(uint64(s.Index), 10)
	hook := fmt.Sprintf("%s.Fault(%s)", agentAlias, idx)
	switch s.Peer {
	case catalog.PeerDial:
		hook = fmt.Sprintf("%s.Dial(%s, %s)", agentAlias, idx, peerAddr(in, call))
	case catalog.PeerAccept:
		hook = fmt.Sprintf("%s.Accept(%s)", agentAlias, idx)
	}
	if done := doneArg(in, call); done != "" && s.Kind.Has(catalog.KindDelay) {
		switch s.Peer {
		case catalog.PeerDial:
			hook = fmt.Sprintf("%s.DialCtx(%s, %s, %s)", agentAlias, idx, peerAddr(in, call), done)
		case catalog.PeerAccept: // its first call serves a peer's request: no context of its own
		default:
			hook = fmt.Sprintf("%s.FaultCtx(%s, %s)", agentAlias, idx, done)
		}
	}
	disk, narrowed := diskEdit(in, call, s, res)
	if narrowed != "" {
		s.Kind &^= catalog.KindCorrupt | catalog.KindTorn
	}
	// A crash after the call: the hook before it arms the goroutine, the
	// deferred After runs once the call (and the results' evaluation)
	// returned, before the caller's next instruction.
	after := afterHook(s)
	test := "k != 0"
	if disk.ok {
		// The disk hook's k < 0 is the disk fault, carried out below.
		fmt.Fprintf(&b, "{ %sgofaultK, gofaultP := %s.Disk(%s); ", after, agentAlias, idx)
		hook, test = "gofaultK", "k > 0"
	}
	if errBranch {
		if !disk.ok {
			b.WriteString("{ " + after)
		}
		fmt.Fprintf(&b, "if k := %s; %s { ", hook, test)
		if recv, m := releaseCall(in, call); m != "" {
			fmt.Fprintf(&b, "%s.%s(); ", recv, m)
		}
		b.WriteString("return ")
		for i := range names[:len(names)-1] {
			fmt.Fprintf(&b, "gofaultZ%d, ", i)
		}
		if paths := pathArgs(in, call, s); len(paths) > 0 {
			fmt.Fprintf(&b, "%s.WithPaths(gofaultErr%s(k), %s) }; ", agentAlias, idx, strings.Join(paths, ", "))
		} else {
			fmt.Fprintf(&b, "gofaultErr%s(k) }; ", idx)
		}
	} else if !disk.ok {
		fmt.Fprintf(&b, "{ %s%s; ", after, hook)
	}
	suffix := " }()"
	switch {
	case disk.tear != "":
		fmt.Fprintf(&b, "if gofaultK < 0 { %s }; ", disk.tear)
	case disk.corrupt != "":
		// The real read runs; its bytes are altered after it.
		rs := make([]string, len(names))
		for i := range rs {
			rs[i] = fmt.Sprintf("gofaultR%d", i)
		}
		b.WriteString(strings.Join(rs, ", ") + " := ")
		suffix = fmt.Sprintf("; if gofaultK < 0 { %s }; return %s }()", disk.corrupt, strings.Join(rs, ", "))
	}
	if len(names) > 0 && disk.corrupt == "" {
		b.WriteString("return ")
	}
	fmt.Fprintf(&b, "/*line %s:%d:%d*/", in.lineName, start.Line, start.Column)
	return siteEdit{
		site:      s,
		start:     start.Offset,
		end:       end.Offset,
		prefix:    b.String(),
		suffix:    suffix,
		startLine: start.Line,
		endLine:   end.Line,
		errBranch: errBranch,
		narrowed:  narrowed,
	}, ""
}

// afterHook is the statement that opens a site's hook function when the
// site can crash after its call (catalog.KindCrashAfter): a deferred
// agent.After, which asks for the crash once the call has returned; ""
// for other sites.
func afterHook(s *catalog.Site) string {
	if !s.Kind.Has(catalog.KindCrashAfter) {
		return ""
	}
	return fmt.Sprintf("defer %s.After(%d); ", agentAlias, s.Index)
}

// releaseOnError maps the methods whose real failures release their
// receiver to the method that does it. A bbolt or database/sql
// transaction whose Commit fails is rolled back (bbolt's Commit rolls back
// on every error it returns while the transaction is open; a failed
// database/sql Commit ends the transaction); an *os.File whose Close
// fails is closed all the same. An injected error skips the call, so the
// fault branch releases the receiver itself: a bbolt write transaction
// left open holds its database's lock, and the DB's Close then waits for
// ever — a hang no real failure causes (etcd's defrag closes its
// temporary database after a failed copy: with ErrTxClosed injected at
// the copy's Commit it hung the member, fuzz trial 1-11 on v3.5.35).
var releaseOnError = map[string]string{
	"(*go.etcd.io/bbolt.Tx).Commit":       "Rollback",
	"(*github.com/boltdb/bolt.Tx).Commit": "Rollback",
	"(*database/sql.Tx).Commit":           "Rollback",
	"(*os.File).Close":                    "Close",
}

// releaseCall returns the receiver expression of a call of a method in
// releaseOnError, as source, and the method that releases it; m is ""
// for any other call, and for a receiver that is not a plain name or a
// chain of field selections (evaluating anything else again could have
// effects; the fault branch evaluates it once, instead of the call).
func releaseCall(in fileInput, call *ast.CallExpr) (recv, m string) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	fn, ok := in.info.Uses[sel.Sel].(*types.Func)
	if !ok {
		return "", ""
	}
	if m = releaseOnError[fn.FullName()]; m == "" {
		return "", ""
	}
	if tv, ok := in.info.Types[sel.X]; !ok || tv.IsType() {
		return "", "" // a method expression, (*T).Commit(tx)
	}
	if recv, ok := plainExpr(in, sel.X); ok {
		return recv, m
	}
	return "", ""
}

// peerAddr returns a Go expression for the address a peer-network dial
// connects or sends to, for the hook to pass on (agent.Dial): a request's
// URL.Host, for a call that takes an *http.Request (Do, RoundTrip), or
// the string argument of a parameter named like an address (net.Dial's
// address, a StreamLayer's Dial(address, timeout)); `""` when there is
// none, or when the argument is not a plain name or a chain of field
// selections (evaluating anything else an extra time could have effects).
func peerAddr(in fileInput, call *ast.CallExpr) string {
	tv, ok := in.info.Types[call.Fun]
	if !ok || tv.Type == nil {
		return `""`
	}
	sig, ok := tv.Type.Underlying().(*types.Signature)
	if !ok {
		return `""`
	}
	for i, arg := range call.Args {
		if i >= sig.Params().Len() {
			break
		}
		param := sig.Params().At(i)
		text, plain := plainExpr(in, arg)
		if !plain {
			continue
		}
		if isPointerTo(param.Type(), "net/http", "Request") {
			return fmt.Sprintf(`func() string { if gofaultR := %s; gofaultR != nil && gofaultR.URL != nil { return gofaultR.URL.Host }; return "" }()`, text)
		}
		if b, ok := param.Type().Underlying().(*types.Basic); ok && b.Kind() == types.String && isAddrName(param.Name()) {
			if tv, ok := in.info.Types[arg]; ok && types.Identical(tv.Type, types.Typ[types.String]) {
				return text
			}
			return "string(" + text + ")" // a named string type (raft.ServerAddress)
		}
	}
	return `""`
}

// pathParams are the names of the parameters that take a file name, in
// os and in code like it (os.OpenFile's name, os.Rename's oldpath and
// newpath, ioutil.WriteFile's filename).
var pathParams = map[string]bool{
	"name": true, "path": true, "filename": true, "file": true, "dir": true, "dirname": true,
	"oldpath": true, "newpath": true, "oldname": true, "newname": true,
}

// pathArgs returns Go expressions for the file names a call works on, for
// an injected *fs.PathError or *os.LinkError to carry (agent.WithPaths):
// an *os.File receiver's Name() (nil-safe), else the arguments of string
// parameters named like file names (pathParams), at most two; none when
// the site's errors carry no file name, or an argument is not a plain
// name, a field chain, a literal or a conversion of one.
func pathArgs(in fileInput, call *ast.CallExpr, s *catalog.Site) []string {
	named := false
	for _, e := range s.Errors {
		if strings.Contains(e.Expr, "fs.PathError{") || strings.Contains(e.Expr, "os.LinkError{") {
			named = true
		}
	}
	if !named {
		return nil
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if tv, ok := in.info.Types[sel.X]; ok && !tv.IsType() && isPointerTo(tv.Type, "os", "File") {
			if recv, ok := plainExpr(in, sel.X); ok {
				return []string{fmt.Sprintf(`func() string { if gofaultF := %s; gofaultF != nil { return gofaultF.Name() }; return "" }()`, recv)}
			}
			return nil
		}
	}
	tv, ok := in.info.Types[call.Fun]
	if !ok || tv.Type == nil {
		return nil
	}
	sig, ok := tv.Type.Underlying().(*types.Signature)
	if !ok {
		return nil
	}
	var out []string
	for i, arg := range call.Args {
		if i >= sig.Params().Len() || len(out) == 2 {
			break
		}
		param := sig.Params().At(i)
		if b, ok := param.Type().Underlying().(*types.Basic); !ok || b.Kind() != types.String || !pathParams[param.Name()] {
			continue
		}
		text, plain := plainExpr(in, arg)
		if !plain {
			if text, plain = fileName(in, arg); !plain {
				return nil
			}
		}
		if tv, ok := in.info.Types[arg]; !ok || !types.Identical(tv.Type, types.Typ[types.String]) {
			text = "string(" + text + ")"
		}
		out = append(out, text)
	}
	return out
}

// fileName returns a nil-safe Go expression for an argument that is an
// *os.File's Name() (os.Rename(f.Name(), dst), etcd's snapshotter): the
// file's name, read again without effects.
func fileName(in fileInput, arg ast.Expr) (string, bool) {
	call, ok := ast.Unparen(arg).(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return "", false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Name" {
		return "", false
	}
	if tv, ok := in.info.Types[sel.X]; !ok || tv.IsType() || !isPointerTo(tv.Type, "os", "File") {
		return "", false
	}
	recv, ok := plainExpr(in, sel.X)
	if !ok {
		return "", false
	}
	return fmt.Sprintf(`func() string { if gofaultF := %s; gofaultF != nil { return gofaultF.Name() }; return "" }()`, recv), true
}

// isPointerTo reports whether t is *pkg.name (*os.File: "os", "File").
func isPointerTo(t types.Type, pkg, name string) bool {
	p, ok := t.(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := p.Elem().(*types.Named)
	return ok && n.Obj().Name() == name && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == pkg
}

// plainExpr returns the source of x when x is a name, a chain of field
// selections on one, a literal, or a conversion of one of those
// (string(addr)): an expression the hook may evaluate again without
// effects.
func plainExpr(in fileInput, x ast.Expr) (string, bool) {
	for e := x; ; {
		switch v := ast.Unparen(e).(type) {
		case *ast.Ident, *ast.BasicLit:
			start, end := in.fset.Position(x.Pos()).Offset, in.fset.Position(x.End()).Offset
			return string(in.src[start:end]), true
		case *ast.SelectorExpr:
			e = v.X
		case *ast.CallExpr:
			if tv, ok := in.info.Types[v.Fun]; !ok || !tv.IsType() || len(v.Args) != 1 {
				return "", false
			}
			e = v.Args[0]
		default:
			return "", false
		}
	}
}

// doneArg returns a Go expression for the context a call takes, for an
// injected delay to end when it is done (agent.FaultCtx): its first
// context.Context argument, else its first *http.Request's Context()
// (nil-safe); "" when it takes none, or the argument is not a plain name
// (evaluating it again could have effects).
func doneArg(in fileInput, call *ast.CallExpr) string {
	tv, ok := in.info.Types[call.Fun]
	if !ok || tv.Type == nil {
		return ""
	}
	sig, ok := tv.Type.Underlying().(*types.Signature)
	if !ok {
		return ""
	}
	req := ""
	for i, arg := range call.Args {
		if i >= sig.Params().Len() {
			break
		}
		t := sig.Params().At(i).Type()
		named, isNamed := t.(*types.Named)
		isCtx := isNamed && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == "context" && named.Obj().Name() == "Context"
		if !isCtx && (req != "" || !isPointerTo(t, "net/http", "Request")) {
			continue
		}
		text, plain := plainExpr(in, arg)
		if !plain {
			continue
		}
		if isCtx {
			return text
		}
		req = fmt.Sprintf(`func() interface{ Done() <-chan struct{} } { if gofaultR := %s; gofaultR != nil { return gofaultR.Context() }; return nil }()`, text)
	}
	return req
}

// isAddrName reports whether a parameter's name says it is an address.
func isAddrName(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "addr") || n == "target" || n == "host" || n == "hostport"
}

// editDeferred builds the edit for a site that is the call of a go or
// defer statement. Such a call evaluates its function value and arguments
// when the statement runs and calls later; wrapping it in a closure would
// evaluate them late. So the function value and the arguments become the
// arguments of a function literal that calls the hook and then the
// function:
//
//	defer func(gofaultF func() error) { gofaultagent.Fault(N); gofaultF() }(f.Close)
//
// The call's results are discarded by the statement, so an injected error
// could only skip the call, which no real failure does: the site keeps its
// delay and crash kinds and loses KindError (in the built catalog too).
func editDeferred(in fileInput, q *qualifier, call *ast.CallExpr, s *catalog.Site) (siteEdit, string) {
	if s.Kind&(catalog.KindDelay|catalog.KindCrash) == 0 {
		return siteEdit{}, SkipGoDefer
	}
	tv, ok := in.info.Types[call.Fun]
	if !ok || tv.Type == nil || tv.IsType() || tv.IsBuiltin() {
		return siteEdit{}, SkipNoType
	}
	sig, ok := tv.Type.Underlying().(*types.Signature)
	if !ok {
		return siteEdit{}, SkipNoType
	}
	if len(call.Args) == 1 {
		if t, ok := in.info.Types[call.Args[0]].Type.(*types.Tuple); ok && t.Len() > 1 {
			return siteEdit{}, SkipGoDefer // f(g()) with a multi-value g
		}
	}
	trial := q.trial()
	if !trial.nameable(sig) {
		return siteEdit{}, SkipUnnameable
	}
	scope := in.pkg.Scope().Innermost(call.Pos())
	fn, ok := trial.typeString(types.NewSignatureType(nil, nil, nil, sig.Params(), sig.Results(), sig.Variadic()), scope, call.Pos(), s.Index)
	if !ok {
		return siteEdit{}, SkipUnnameable
	}
	var params, args []string
	params = append(params, "gofaultF "+fn)
	for i := 0; i < sig.Params().Len(); i++ {
		t := sig.Params().At(i).Type()
		name := fmt.Sprintf("gofaultA%d", i)
		variadic := sig.Variadic() && i == sig.Params().Len()-1
		if variadic {
			t = t.(*types.Slice).Elem()
		}
		ts, ok := trial.typeString(t, scope, call.Pos(), s.Index)
		if !ok {
			return siteEdit{}, SkipUnnameable
		}
		if variadic {
			params = append(params, name+" ..."+ts)
			args = append(args, name+"...")
			continue
		}
		params = append(params, name+" "+ts)
		args = append(args, name)
	}
	q.commit(trial)
	s.Kind &^= catalog.KindError
	var narrowed string
	if s.Kind&(catalog.KindCorrupt|catalog.KindTorn) != 0 {
		s.Kind &^= catalog.KindCorrupt | catalog.KindTorn
		narrowed = NarrowGoDefer
	}
	start := in.fset.Position(call.Pos())
	end := in.fset.Position(call.End())
	lp := in.fset.Position(call.Lparen)
	lpText := ", "
	if len(call.Args) == 0 {
		lpText = ""
	}
	return siteEdit{
		site:  s,
		start: start.Offset,
		end:   end.Offset,
		prefix: fmt.Sprintf("func(%s) { %s%s.Fault(%d); gofaultF(%s) }(/*line %s:%d:%d*/",
			strings.Join(params, ", "), afterHook(s), agentAlias, s.Index, strings.Join(args, ", "), in.lineName, start.Line, start.Column),
		lparen:     lp.Offset,
		lparenText: lpText,
		startLine:  start.Line,
		endLine:    end.Line,
		narrowed:   narrowed,
	}, ""
}

// apply inserts the edits' text into the source, adds the imports after the
// package clause (on the same line) and, for a renamed file, a leading
// //line directive.
func apply(in fileInput, q *qualifier, edits []siteEdit) []byte {
	type ins struct {
		off   int
		text  string
		order int // at one offset: suffixes (inner first), then prefixes (outer first)
		skip  int // bytes of the source replaced by text
	}
	var all []ins
	for _, e := range edits {
		span := e.end - e.start
		if e.block {
			all = append(all, ins{e.start, e.prefix, -1, 0})
			continue
		}
		all = append(all, ins{e.start, e.prefix, 1<<40 - span, 0}, ins{e.end, e.suffix, span, 0})
		if e.lparen > 0 {
			all = append(all, ins{e.lparen, e.lparenText, 1 << 41, 1})
		}
	}
	// The imports go right after the package name.
	imp := fmt.Sprintf("; import (%s %q", agentAlias, AgentModule)
	for _, p := range q.paths() {
		imp += fmt.Sprintf("; %s %q", q.alias[p], p)
	}
	if usesUnsafe(edits) {
		imp += fmt.Sprintf("; %s %q", unsafeAlias, "unsafe")
	}
	imp += ")"
	all = append(all, ins{in.fset.Position(in.file.Name.End()).Offset, imp, -1, 0})
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].off != all[j].off {
			return all[i].off < all[j].off
		}
		return all[i].order < all[j].order
	})
	var b bytes.Buffer
	if in.renamed {
		fmt.Fprintf(&b, "//line %s:1\n", in.lineName)
	}
	last := 0
	if in.renamed && bytes.HasPrefix(in.src, []byte("\ufeff")) {
		last = 3 // a BOM is only allowed first, before the //line header
	}
	for _, x := range all {
		b.Write(in.src[last:x.off])
		b.WriteString(x.text)
		last = x.off + x.skip
	}
	b.Write(in.src[last:])
	if len(q.aliases) > 0 {
		// On a line of its own after the last one, without a newline, so
		// that the file keeps its number of lines.
		if !bytes.HasSuffix(in.src, []byte("\n")) {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "type (%s)", strings.Join(q.aliases, "; "))
	}
	return b.Bytes()
}

func isCgo(f *ast.File) bool {
	for _, im := range f.Imports {
		if im.Path.Value == `"C"` {
			return true
		}
	}
	return false
}

// qualifier names packages in type strings with aliased imports, and
// types that a site's scope shadows with type aliases.
type qualifier struct {
	pkg   *types.Package
	alias map[string]string // import path -> alias
	// aliases are the type alias specs ("gofaultT7_stream = stream") to
	// declare at the end of the file.
	aliases []string
}

func newQualifier(pkg *types.Package) *qualifier {
	return &qualifier{pkg: pkg, alias: map[string]string{}}
}

// trial returns a copy whose new aliases can be committed or dropped.
func (q *qualifier) trial() *qualifier {
	t := &qualifier{pkg: q.pkg, alias: make(map[string]string, len(q.alias)), aliases: slices.Clone(q.aliases)}
	for k, v := range q.alias {
		t.alias[k] = v
	}
	return t
}

func (q *qualifier) commit(t *qualifier) { q.alias, q.aliases = t.alias, t.aliases }

// typeString writes t as code at pos, in scope (the innermost scope at
// pos; nil for none): types.TypeString with q's package aliases, except
// that a package-level or predeclared type whose name a declaration in
// scope hides at pos — nats-server's `stream, err :=
// acc.lookupStream(stream)`, where the string parameter stream hides the
// type stream — is named through an alias "gofaultT<site>_<name>" that
// apply declares at file level, where the name still means the type. ok
// is false for a shadowed generic type, which such an alias cannot stand
// for.
func (q *qualifier) typeString(t types.Type, scope *types.Scope, pos token.Pos, site uint32) (string, bool) {
	s := types.TypeString(t, q.qualify)
	if scope == nil {
		return s, true
	}
	e, err := parser.ParseExpr(s)
	if err != nil {
		return s, true // not expected; the build names any problem
	}
	ok, changed := true, false
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			return false // gofaultpkgN.Name: no code declares gofault names
		case *ast.Field:
			if n.Type != nil {
				ast.Inspect(n.Type, visit)
			}
			return false // field, parameter and method names are not types
		case *ast.Ident:
			obj := q.pkg.Scope().Lookup(n.Name)
			if obj == nil {
				obj = types.Universe.Lookup(n.Name)
			}
			tn, isType := obj.(*types.TypeName)
			if !isType {
				return false
			}
			if _, seen := scope.LookupParent(n.Name, pos); seen == obj {
				return false
			}
			if named, isNamed := tn.Type().(*types.Named); isNamed && named.TypeParams().Len() > 0 {
				ok = false
				return false
			}
			alias := fmt.Sprintf("gofaultT%d_%s", site, n.Name)
			if spec := alias + " = " + n.Name; !slices.Contains(q.aliases, spec) {
				q.aliases = append(q.aliases, spec)
			}
			n.Name = alias
			changed = true
		}
		return true
	}
	ast.Inspect(e, visit)
	if !ok || !changed {
		return s, ok
	}
	var b strings.Builder
	if err := format.Node(&b, token.NewFileSet(), e); err != nil {
		return s, false
	}
	return b.String(), true
}

func (q *qualifier) qualify(p *types.Package) string {
	if p == q.pkg {
		return ""
	}
	a, ok := q.alias[p.Path()]
	if !ok {
		a = fmt.Sprintf("gofaultpkg%d", len(q.alias))
		q.alias[p.Path()] = a
	}
	return a
}

func (q *qualifier) paths() []string {
	ps := make([]string, 0, len(q.alias))
	for p := range q.alias {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// nameable reports whether t can be written in q.pkg's source: every named
// type in it is exported or local, and its package importable.
func (q *qualifier) nameable(t types.Type) bool {
	return q.nameableSeen(t, map[types.Type]bool{})
}

func (q *qualifier) nameableSeen(t types.Type, seen map[types.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	obj := func(o *types.TypeName) bool {
		if o.Pkg() == nil || o.Pkg() == q.pkg {
			return true
		}
		return o.Exported() && o.Pkg().Name() != "main" && canImport(q.pkg.Path(), o.Pkg().Path())
	}
	switch t := t.(type) {
	case *types.Basic:
		return t.Kind() != types.Invalid && t.Info()&types.IsUntyped == 0
	case *types.Alias:
		if !obj(t.Obj()) {
			return false
		}
		for i := 0; i < t.TypeArgs().Len(); i++ {
			if !q.nameableSeen(t.TypeArgs().At(i), seen) {
				return false
			}
		}
		return true
	case *types.Named:
		if !obj(t.Obj()) {
			return false
		}
		for i := 0; i < t.TypeArgs().Len(); i++ {
			if !q.nameableSeen(t.TypeArgs().At(i), seen) {
				return false
			}
		}
		return true
	case *types.TypeParam:
		return true
	case *types.Pointer:
		return q.nameableSeen(t.Elem(), seen)
	case *types.Slice:
		return q.nameableSeen(t.Elem(), seen)
	case *types.Array:
		return q.nameableSeen(t.Elem(), seen)
	case *types.Chan:
		return q.nameableSeen(t.Elem(), seen)
	case *types.Map:
		return q.nameableSeen(t.Key(), seen) && q.nameableSeen(t.Elem(), seen)
	case *types.Signature:
		return q.nameableSeen(t.Params(), seen) && q.nameableSeen(t.Results(), seen)
	case *types.Tuple:
		for i := 0; i < t.Len(); i++ {
			if !q.nameableSeen(t.At(i).Type(), seen) {
				return false
			}
		}
		return true
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			f := t.Field(i)
			if !f.Exported() && f.Pkg() != q.pkg {
				return false
			}
			if !q.nameableSeen(f.Type(), seen) {
				return false
			}
		}
		return true
	case *types.Interface:
		for i := 0; i < t.NumExplicitMethods(); i++ {
			m := t.ExplicitMethod(i)
			if !m.Exported() && m.Pkg() != q.pkg {
				return false
			}
			if !q.nameableSeen(m.Type(), seen) {
				return false
			}
		}
		for i := 0; i < t.NumEmbeddeds(); i++ {
			if !q.nameableSeen(t.EmbeddedType(i), seen) {
				return false
			}
		}
		return true
	case *types.Union:
		return false
	}
	return false
}

// canImport reports whether package importer may import path under the
// internal-package rule.
func canImport(importer, p string) bool {
	if p == importer {
		return false
	}
	var parent string
	switch {
	case strings.HasPrefix(p, "internal/") || p == "internal":
		return false // standard library internals
	case strings.HasSuffix(p, "/internal"):
		parent = strings.TrimSuffix(p, "/internal")
	case strings.Contains(p, "/internal/"):
		parent = p[:strings.LastIndex(p, "/internal/")]
	default:
		return !strings.Contains(p, "/vendor/")
	}
	return importer == parent || strings.HasPrefix(importer, parent+"/")
}

// errorsImportable reports whether the error values' imports may be
// imported by package pkg (its own path is fine: the qualifier is dropped):
// allowed by the internal-package rule and creating no import cycle.
func errorsImportable(pkg string, errs []catalog.ErrorValue, imports func(from, to string) bool) bool {
	for _, e := range errs {
		for _, p := range e.Imports {
			if p == pkg {
				continue
			}
			if !canImport(pkg, p) || (imports != nil && imports(p, pkg)) {
				return false
			}
		}
	}
	return true
}

// errFile is one generated gofault_errors*.go file of a package.
type errFile struct {
	name    string // base name
	src     []byte
	lineOf  map[uint32][2]int // site index -> first and last line of its function
	imports map[string]string // import path -> package name
}

// errorFiles generates the gofaultErrN functions of the sites of package
// pkgPath (named pkgName). names gives the package names of import paths
// (importName guesses the others). An import no expression of a site uses
// is not written; sites whose error values import packages with clashing
// names go to further files. Each error is returned through
// agent.Injected, which remembers it for agent.Ignored.
func errorFiles(pkgName, pkgPath string, sites []*catalog.Site, names map[string]string) ([]*errFile, error) {
	var files []*errFile
	sort.Slice(sites, func(i, j int) bool { return sites[i].Index < sites[j].Index })
	bodies := map[*errFile][]*catalog.Site{}
	renames := map[*catalog.Site][]map[string]string{} // per error: qualifier -> alias
	for _, s := range sites {
		// need maps the import paths of the site's errors to the names
		// they are imported under. Two packages of one name in one site
		// (etcd v3.6's etcdserver/errors beside the standard library's
		// errors.New) cannot share a file under that name: the later is
		// imported under an alias and its expressions renamed.
		need := map[string]string{}
		taken := map[string]string{} // name -> path, within the site
		ren := make([]map[string]string, len(s.Errors))
		for i, e := range s.Errors {
			used, err := qualifiers(e.Expr)
			if err != nil {
				return nil, fmt.Errorf("site %s error %s: %w", s.ID, e.Name, err)
			}
			for _, p := range e.Imports {
				n := names[p]
				if n == "" {
					n = importName(p)
				}
				if p == pkgPath || !used[n] {
					continue
				}
				alias, ok := need[p]
				if !ok {
					alias = n
					for k := 2; taken[alias] != "" && taken[alias] != p; k++ {
						alias = fmt.Sprintf("gofault_%s%d", n, k)
					}
					need[p], taken[alias] = alias, p
				}
				if alias != n {
					if ren[i] == nil {
						ren[i] = map[string]string{}
					}
					ren[i][n] = alias
				}
			}
		}
		renames[s] = ren
		var f *errFile
	place:
		for _, c := range files {
			for p, n := range need {
				for cp, cn := range c.imports {
					if cn == n && cp != p {
						continue place
					}
				}
			}
			f = c
			break
		}
		if f == nil {
			name := "gofault_errors.go"
			if len(files) > 0 {
				name = fmt.Sprintf("gofault_errors%d.go", len(files))
			}
			// Every injected error goes through the agent (agent.Injected),
			// which remembers it for agent.Ignored.
			f = &errFile{name: name, lineOf: map[uint32][2]int{}, imports: map[string]string{AgentModule: agentAlias}}
			files = append(files, f)
		}
		for p, n := range need {
			f.imports[p] = n
		}
		bodies[f] = append(bodies[f], s)
	}
	for _, f := range files {
		var b bytes.Buffer
		fmt.Fprintf(&b, "// Code generated by gofault. DO NOT EDIT.\n\npackage %s\n\n", pkgName)
		paths := make([]string, 0, len(f.imports))
		for p := range f.imports {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			fmt.Fprintf(&b, "import %s %q\n", f.imports[p], p)
		}
		line := strings.Count(b.String(), "\n") + 1
		for _, s := range bodies[f] {
			first := line + 1
			var fb strings.Builder
			fmt.Fprintf(&fb, "\nfunc gofaultErr%d(k int) error {\n\tswitch k {\n", s.Index)
			for i, e := range s.Errors {
				expr, err := localExpr(e.Expr, pkgName, pkgPath, e.Imports, renames[s][i])
				if err != nil {
					return nil, fmt.Errorf("site %s error %s: %w", s.ID, e.Name, err)
				}
				if i == 0 {
					fmt.Fprintf(&fb, "\tdefault:\n\t\treturn %s.Injected(%s) // %s\n", agentAlias, expr, e.Name)
				} else {
					fmt.Fprintf(&fb, "\tcase %d:\n\t\treturn %s.Injected(%s) // %s\n", i+1, agentAlias, expr, e.Name)
				}
			}
			fb.WriteString("\t}\n}\n")
			b.WriteString(fb.String())
			line += strings.Count(fb.String(), "\n")
			f.lineOf[s.Index] = [2]int{first, line}
		}
		f.src = b.Bytes()
	}
	return files, nil
}

// qualifiers returns the identifiers expr uses as selector bases, e.g. "fs"
// and "syscall" in &fs.PathError{Err: syscall.EIO}.
func qualifiers(expr string) (map[string]bool, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", expr, err)
	}
	used := map[string]bool{}
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	return used, nil
}

// localExpr parses an error expression and, when it names the package it
// is generated into, drops that qualifier (a package cannot import itself).
func localExpr(expr, pkgName, pkgPath string, imports []string, rename map[string]string) (string, error) {
	self := false
	for _, p := range imports {
		if p == pkgPath {
			self = true
		}
	}
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return "", fmt.Errorf("parse %q: %w", expr, err)
	}
	if !self && len(rename) == 0 {
		return expr, nil
	}
	if len(rename) > 0 {
		ast.Inspect(e, func(m ast.Node) bool {
			if sel, ok := m.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && rename[id.Name] != "" {
					id.Name = rename[id.Name]
				}
			}
			return true
		})
	}
	if !self {
		var b bytes.Buffer
		if err := format.Node(&b, token.NewFileSet(), e); err != nil {
			return "", fmt.Errorf("print %q: %w", expr, err)
		}
		return b.String(), nil
	}
	e = unqualify(e, pkgName)
	ast.Inspect(e, func(m ast.Node) bool {
		// Replace the qualified identifiers in every field that can hold
		// one; children are visited after their parent is fixed.
		switch m := m.(type) {
		case *ast.CompositeLit:
			m.Type = unqualify(m.Type, pkgName)
			for i := range m.Elts {
				m.Elts[i] = unqualify(m.Elts[i], pkgName)
			}
		case *ast.UnaryExpr:
			m.X = unqualify(m.X, pkgName)
		case *ast.StarExpr:
			m.X = unqualify(m.X, pkgName)
		case *ast.ParenExpr:
			m.X = unqualify(m.X, pkgName)
		case *ast.SelectorExpr:
			m.X = unqualify(m.X, pkgName)
		case *ast.CallExpr:
			m.Fun = unqualify(m.Fun, pkgName)
			for i := range m.Args {
				m.Args[i] = unqualify(m.Args[i], pkgName)
			}
		case *ast.KeyValueExpr:
			m.Value = unqualify(m.Value, pkgName)
		case *ast.BinaryExpr:
			m.X = unqualify(m.X, pkgName)
			m.Y = unqualify(m.Y, pkgName)
		}
		return true
	})
	var b bytes.Buffer
	if err := format.Node(&b, token.NewFileSet(), e); err != nil {
		return "", fmt.Errorf("print %q: %w", expr, err)
	}
	return b.String(), nil
}

func unqualify(e ast.Expr, pkgName string) ast.Expr {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == pkgName {
			return sel.Sel
		}
	}
	return e
}

// importName guesses the package name of an import path: its last element
// without a major-version suffix or a gopkg.in ".vN" suffix.
func importName(p string) string {
	base := path.Base(p)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" && strings.Contains(p, "/") {
		base = path.Base(path.Dir(p))
	}
	if i := strings.Index(base, ".v"); i > 0 && strings.HasPrefix(p, "gopkg.in/") {
		base = base[:i]
	}
	return strings.NewReplacer("-", "_", ".", "_").Replace(base)
}
