package instrument

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/gofault/gofault/catalog"
)

// Transport names the sends of an in-process transport between the
// members of one process (gofault test's test.transport): each send
// method gets a fault site at its entry (catalog.PeerSend) where a cut
// between the member sending and the member the send goes to makes it
// return Error at once, as the transport does for an unreachable peer.
type Transport struct {
	// Address is the field of the member type (Target.Member) holding
	// the member's own transport address: the member hook announces it
	// (agent.MemberEnterAt), so that a send to it names the member.
	Address string `json:",omitempty"`
	// Send are the send methods, "pkg/path.Type.method(peer)" or
	// "pkg/path.Type.method(from, peer)": peer the parameter or
	// receiver.field that holds the address sent to, from the one that
	// holds the sender's (else the sender is the goroutine's member).
	Send []string `json:",omitempty"`
	// Error is the text of the error a cut send returns; empty: a
	// refused dial (*net.OpError with ECONNREFUSED).
	Error string `json:",omitempty"`
}

// sendRule is one parsed Transport.Send entry.
type sendRule struct {
	pkg, typ, method string
	// from and peer are the expressions of the sender's address ("": the
	// goroutine's member) and of the address sent to.
	from, peer string
}

func (r sendRule) String() string {
	args := r.peer
	if r.from != "" {
		args = r.from + ", " + r.peer
	}
	return fmt.Sprintf("%s.%s.%s(%s)", r.pkg, r.typ, r.method, args)
}

// parseSend parses "pkg/path.Type.method(peer)" or
// "pkg/path.Type.method(from, peer)".
func parseSend(s string) (sendRule, error) {
	bad := fmt.Errorf("transport send %q: want pkg/path.Type.method(peer) or pkg/path.Type.method(from, peer), e.g. github.com/hashicorp/raft.InmemTransport.makeRPC(i.localAddr, target)", s)
	head, args, ok := strings.Cut(s, "(")
	if !ok || !strings.HasSuffix(args, ")") {
		return sendRule{}, bad
	}
	m, err := parseMember(head) // the same shape: pkg/path.Type.name
	if err != nil {
		return sendRule{}, bad
	}
	r := sendRule{pkg: m.pkg, typ: m.typ, method: m.field}
	parts := strings.Split(strings.TrimSuffix(args, ")"), ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
		if e, err := parser.ParseExpr(parts[i]); err != nil || !peerShape(e) {
			return sendRule{}, bad
		}
	}
	switch len(parts) {
	case 1:
		r.peer = parts[0]
	case 2:
		r.from, r.peer = parts[0], parts[1]
	default:
		return sendRule{}, bad
	}
	return r, nil
}

// peerShape reports whether e is an identifier or a chain of field
// selections on one (x.field, x.a.b).
func peerShape(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return true
	case *ast.SelectorExpr:
		return peerShape(e.X)
	}
	return false
}

// sendMethod is a send rule checked against the loaded package: the
// method's declaration and where its body starts.
type sendMethod struct {
	rule sendRule
	pkg  *packages.Package
	fd   *ast.FuncDecl
	fn   string // "(*Type).method"
	file string
	pos  token.Position // the body's "{"
}

// resolveSend checks rule against the loaded packages: a method of a
// type declared in a loaded package, declared with a body, whose last
// result is an error, and whose peer expression is a string type in the
// method's scope.
func resolveSend(rule sendRule, pkgs map[string]*packages.Package) (*sendMethod, error) {
	p := pkgs[rule.pkg]
	if p == nil || p.Types == nil {
		return nil, fmt.Errorf("transport send %s: package %s is not among the packages instrumented (name it in the packages to analyse)", rule, rule.pkg)
	}
	obj, ok := p.Types.Scope().Lookup(rule.typ).(*types.TypeName)
	if !ok {
		return nil, fmt.Errorf("transport send %s: package %s declares no type %s", rule, rule.pkg, rule.typ)
	}
	m, _, _ := types.LookupFieldOrMethod(types.NewPointer(obj.Type()), true, p.Types, rule.method)
	fn, ok := m.(*types.Func)
	if !ok {
		return nil, fmt.Errorf("transport send %s: type %s has no method %s", rule, rule.typ, rule.method)
	}
	res := fn.Type().(*types.Signature).Results()
	if res.Len() == 0 || !types.Identical(res.At(res.Len()-1).Type(), types.Universe.Lookup("error").Type()) {
		return nil, fmt.Errorf("transport send %s: %s's last result is not an error, so a cut send cannot fail", rule, rule.method)
	}
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || p.TypesInfo.Defs[fd.Name] != fn {
				continue
			}
			for _, x := range []string{rule.from, rule.peer} {
				if x == "" {
					continue
				}
				e, _ := parser.ParseExpr(x)
				info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
				if err := types.CheckExpr(p.Fset, p.Types, fd.Body.Lbrace+1, e, info); err != nil {
					return nil, fmt.Errorf("transport send %s: %s: %v (name a parameter of %s, or a field of its receiver)", rule, x, err, rule.method)
				}
				if b, ok := info.Types[e].Type.Underlying().(*types.Basic); !ok || b.Info()&types.IsString == 0 {
					return nil, fmt.Errorf("transport send %s: %s is a %s, not a string type (name an address)", rule, x, info.Types[e].Type)
				}
			}
			recv := obj.Name()
			if _, ptr := fn.Type().(*types.Signature).Recv().Type().(*types.Pointer); ptr {
				recv = "*" + recv
			}
			return &sendMethod{rule: rule, pkg: p, fd: fd, fn: "(" + recv + ")." + rule.method,
				file: p.Fset.File(f.Pos()).Name(), pos: p.Fset.Position(fd.Body.Lbrace)}, nil
		}
	}
	return nil, fmt.Errorf("transport send %s: %s.%s has no body in the loaded sources (a promoted or assembly method cannot be hooked; name the type that declares it)", rule, rule.typ, rule.method)
}

// resolveAddress checks that field is a string-typed field of the member
// type mt (test.transport.address).
func resolveAddress(mt *memberType, field string) error {
	f, _, _ := types.LookupFieldOrMethod(types.NewPointer(mt.obj.Type()), true, mt.obj.Pkg(), field)
	v, ok := f.(*types.Var)
	if !ok || !v.IsField() {
		return fmt.Errorf("transport address %s: member type %s has no field %s (name the field holding the member's own transport address, e.g. localAddr)", field, mt.rule.typ, field)
	}
	if b, ok := v.Type().Underlying().(*types.Basic); !ok || b.Info()&types.IsString == 0 {
		return fmt.Errorf("transport address %s: field %s of %s is a %s, not a string type", field, field, mt.rule.typ, v.Type())
	}
	return nil
}

// sendError is the error value a cut send returns: text as an
// errors.New, or a refused dial.
func sendError(text string) catalog.ErrorValue {
	if text == "" {
		return catalog.ErrorValue{Name: "ECONNREFUSED", Expr: `&net.OpError{Op: "dial", Net: "inmem", Err: syscall.ECONNREFUSED}`, Imports: []string{"net", "syscall"}}
	}
	return catalog.ErrorValue{Name: "unreachable", Expr: "errors.New(" + strconv.Quote(text) + ")", Imports: []string{"errors"}}
}

// sendSite is the fault site of send method m: at the entry of its body,
// an error (the transport's for an unreachable peer) and the moment a
// partition of members can start.
func sendSite(m *sendMethod, errText string) catalog.Site {
	return catalog.Site{
		ID:     m.rule.pkg + "." + m.fn + ":send", // as analysis names sites: the package's path, the function
		Kind:   catalog.KindError | catalog.KindPartition,
		Pkg:    m.rule.pkg,
		Func:   m.fn,
		Callee: m.fn,
		File:   m.file, Line: m.pos.Line, Col: m.pos.Column,
		IO:     "net",
		Errors: []catalog.ErrorValue{sendError(errText)},
		Peer:   catalog.PeerSend,
	}
}

// withSends returns cat with the sites of sends appended (those already
// there, by ID, are kept as they are).
func withSends(cat *catalog.Catalog, sends []*sendMethod, errText string) *catalog.Catalog {
	if len(sends) == 0 {
		return cat
	}
	c := *cat
	c.Sites = append([]catalog.Site(nil), cat.Sites...)
	have := map[string]bool{}
	for _, s := range c.Sites {
		have[s.ID] = true
	}
	for _, m := range sends {
		s := sendSite(m, errText)
		if have[s.ID] {
			continue
		}
		have[s.ID] = true
		s.Index = uint32(len(c.Sites))
		c.Sites = append(c.Sites, s)
	}
	return &c
}

// sendEdits builds the hooks of the send sites of one file: right after
// the "{" of the method's body comes, on the same line,
//
//	if gofaultagent.Send(N, string(from), string(peer)) != 0 { return *new(T1), ..., gofaultErrN(1) }; /*line f:L:C*/
//
// so that a send the controller cuts returns the transport's error at
// once (from is "" when the rule names no sender address).
func sendEdits(in fileInput, sites []*catalog.Site) (edits []siteEdit, skipped map[uint32]string) {
	skipped = map[uint32]string{}
	tf := in.fset.File(in.file.Pos())
	at := map[[2]int]*ast.FuncDecl{}
	for _, d := range in.file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && fd.Recv != nil {
			p := tf.Position(fd.Body.Lbrace)
			at[[2]int{p.Line, p.Column}] = fd
		}
	}
	for _, s := range sites {
		fd := at[[2]int{s.Line, s.Col}]
		r, ok := in.sendPeers[s.ID]
		if fd == nil || !ok {
			skipped[s.Index] = SkipNotFound
			continue
		}
		from := `""`
		if r.from != "" {
			from = "string(" + r.from + ")"
		}
		var zeros strings.Builder
		res := fd.Type.Results.List
		for i, f := range res {
			if i == len(res)-1 && len(f.Names) <= 1 {
				break // the error
			}
			typ := string(in.src[tf.Offset(f.Type.Pos()):tf.Offset(f.Type.End())])
			n := max(len(f.Names), 1)
			if i == len(res)-1 {
				n-- // the last name is the error
			}
			for range n {
				fmt.Fprintf(&zeros, "*new(%s), ", typ)
			}
		}
		after := tf.Position(fd.Body.Lbrace + 1)
		off := tf.Offset(fd.Body.Lbrace) + 1
		edits = append(edits, siteEdit{site: s, start: off, end: off, errBranch: true,
			prefix: fmt.Sprintf(" if %s.Send(%d, %s, string(%s)) != 0 { return %sgofaultErr%d(1) }; /*line %s:%d:%d*/",
				agentAlias, s.Index, from, r.peer, zeros.String(), s.Index, in.lineName, after.Line, after.Column),
			startLine: after.Line, endLine: after.Line})
	}
	return edits, skipped
}
