package instrument

import (
	"fmt"
	"go/ast"
	"go/types"
	"strconv"
	"strings"

	"github.com/gofault/gofault/catalog"
)

// Why a site loses its disk fault kinds (corrupt, torn) but keeps the
// others: listed in dropped.json as "disk fault" entries.
const (
	NarrowShape     = "disk fault: call shape not recognised"
	NarrowBuffer    = "disk fault: read buffer not a plain expression (evaluated again after the call)"
	NarrowMultiline = "disk fault: an argument spans lines"
	NarrowGoDefer   = "disk fault: go/defer call"
)

// diskForm is how a site's call carries out its disk fault.
type diskForm struct {
	ok bool
	// tear is the statement that writes a torn prefix instead of the
	// call (and never returns); corrupt the one that alters the bytes
	// the call read, run after it with its results as gofaultR0, ....
	tear, corrupt string
}

// diskEdit returns how the call of site s, whose results are res, carries
// out a disk fault (catalog.KindCorrupt or KindTorn), or why it cannot
// (then the site keeps its other kinds). A corrupted read is
//
//	gofaultR0, gofaultR1 := CALL; if gofaultK < 0 { gofaultagent.Corrupt(N, BUF[:gofaultR0], NAME, gofaultP) }
//
// where BUF is evaluated again, so it must be a plain expression (or one
// sliced whole, x[:], which is then x); a torn
// write is, before the call, which then does not run,
//
//	if gofaultK < 0 { gofaultagent.TearWrite(N, RECV, BUF, gofaultP) }
//
// whose arguments are evaluated once, as the call's would be.
func diskEdit(in fileInput, call *ast.CallExpr, s *catalog.Site, res *types.Tuple) (diskForm, string) {
	if s.Kind&(catalog.KindCorrupt|catalog.KindTorn) == 0 {
		return diskForm{}, ""
	}
	d, ok := catalog.DiskCallOf(s.Callee)
	if !ok || call.Ellipsis.IsValid() || len(call.Args) <= max(d.Buf, d.Off, d.Name, d.Perm) || res.Len() != 2 && !d.Write {
		return diskForm{}, NarrowShape
	}
	idx := strconv.FormatUint(uint64(s.Index), 10)
	var recv ast.Expr
	file := false // the receiver is an *os.File
	wrap := ""    // the agent's adapter of a function value to its writer
	if d.Recv && funcValue(in, call.Fun) {
		// A function value bound to the disk call (analysis
		// boundDiskCall: bolt's db.ops.writeAt = db.file.WriteAt), whose
		// torn write goes through the same function.
		if !d.Write || d.Off < 0 || !types.AssignableTo(in.info.Types[call.Fun].Type, writeAtFunc()) {
			return diskForm{}, NarrowShape
		}
		recv, wrap = call.Fun, "WriterAtFunc"
	} else if d.Recv {
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return diskForm{}, NarrowShape
		}
		tv, ok := in.info.Types[sel.X]
		if !ok || tv.IsType() {
			return diskForm{}, NarrowShape
		}
		file = isPointerTo(tv.Type, "os", "File")
		if !file && !types.AssignableTo(tv.Type, writerIface(d.Off >= 0)) {
			return diskForm{}, NarrowShape // the agent's Tear function takes an io.Writer or io.WriterAt
		}
		recv = sel.X
	}
	if d.Write {
		arg := func(i int) ast.Expr { return call.Args[i] }
		var fn string
		var xs []ast.Expr
		switch {
		case d.Name >= 0:
			fn, xs = "TearFile", []ast.Expr{arg(d.Name), arg(d.Buf), arg(d.Perm)}
		case d.Off >= 0:
			fn, xs = "TearWriteAt", []ast.Expr{recv, arg(d.Buf), arg(d.Off)}
		default:
			fn, xs = "TearWrite", []ast.Expr{recv, arg(d.Buf)}
		}
		texts := []string{idx}
		for i, x := range xs {
			t, ok := oneLine(in, x)
			if !ok {
				return diskForm{}, NarrowMultiline
			}
			if i == 0 && wrap != "" {
				t = fmt.Sprintf("%s.%s(%s)", agentAlias, wrap, t)
			}
			texts = append(texts, t)
		}
		texts = append(texts, "gofaultP")
		return diskForm{ok: true, tear: fmt.Sprintf("%s.%s(%s)", agentAlias, fn, strings.Join(texts, ", "))}, ""
	}
	name := `""`
	switch {
	case recv != nil && file:
		if r, ok := plainExpr(in, recv); ok {
			name = fmt.Sprintf(`func() string { if gofaultF := %s; gofaultF != nil { return gofaultF.Name() }; return "" }()`, r)
		}
	case d.Name >= 0:
		if n, ok := plainExpr(in, call.Args[d.Name]); ok && isString(in, call.Args[d.Name]) {
			name = n
		}
	}
	var buf string
	if d.Buf < 0 {
		if !isByteSlice(res.At(0).Type()) {
			return diskForm{}, NarrowShape
		}
		buf = "gofaultR0"
	} else {
		arg := call.Args[d.Buf]
		if se, ok := ast.Unparen(arg).(*ast.SliceExpr); ok && se.Low == nil && se.High == nil && !se.Slice3 {
			arg = se.X // buf[:], an array's bytes (bolt's meta page read): buf[:n] after the call
		}
		b, ok := plainExpr(in, arg)
		if !ok {
			return diskForm{}, NarrowBuffer
		}
		if t, ok := res.At(0).Type().Underlying().(*types.Basic); !d.N || !ok || t.Kind() != types.Int {
			return diskForm{}, NarrowShape
		}
		buf = b + "[:gofaultR0]"
	}
	return diskForm{ok: true, corrupt: fmt.Sprintf("%s.Corrupt(%s, %s, %s, gofaultP)", agentAlias, idx, buf, name)}, ""
}

// funcValue reports whether fun, a call's function, is a function value
// (a variable, a field, a call's result), not a function or method.
func funcValue(in fileInput, fun ast.Expr) bool {
	switch f := ast.Unparen(fun).(type) {
	case *ast.Ident:
		_, isVar := in.info.Uses[f].(*types.Var)
		return isVar
	case *ast.SelectorExpr:
		if sel := in.info.Selections[f]; sel != nil {
			return sel.Kind() == types.FieldVal
		}
		_, isVar := in.info.Uses[f.Sel].(*types.Var) // a package's variable
		return isVar
	}
	return false
}

// writeAtFunc is func([]byte, int64) (int, error), the type of the
// function values agent.WriterAtFunc adapts.
func writeAtFunc() *types.Signature {
	params := types.NewTuple(types.NewVar(0, nil, "p", types.NewSlice(types.Typ[types.Byte])), types.NewVar(0, nil, "off", types.Typ[types.Int64]))
	results := types.NewTuple(types.NewVar(0, nil, "n", types.Typ[types.Int]), types.NewVar(0, nil, "err", types.Universe.Lookup("error").Type()))
	return types.NewSignatureType(nil, nil, nil, params, results, false)
}

// writerIface is io.WriterAt (at) or io.Writer, built here since the
// rewritten file need not import io.
func writerIface(at bool) *types.Interface {
	bytes := types.NewVar(0, nil, "p", types.NewSlice(types.Typ[types.Byte]))
	params := []*types.Var{bytes}
	name := "Write"
	if at {
		params = append(params, types.NewVar(0, nil, "off", types.Typ[types.Int64]))
		name = "WriteAt"
	}
	results := types.NewTuple(types.NewVar(0, nil, "n", types.Typ[types.Int]), types.NewVar(0, nil, "err", types.Universe.Lookup("error").Type()))
	sig := types.NewSignatureType(nil, nil, nil, types.NewTuple(params...), results, false)
	it := types.NewInterfaceType([]*types.Func{types.NewFunc(0, nil, name, sig)}, nil)
	it.Complete()
	return it
}

// oneLine returns the source of x when it fits on one line: the rewrite
// inserts no newline, so every other line keeps its number.
func oneLine(in fileInput, x ast.Expr) (string, bool) {
	start, end := in.fset.Position(x.Pos()).Offset, in.fset.Position(x.End()).Offset
	t := string(in.src[start:end])
	return t, !strings.Contains(t, "\n")
}

func isString(in fileInput, x ast.Expr) bool {
	tv, ok := in.info.Types[x]
	return ok && types.Identical(tv.Type, types.Typ[types.String])
}

func isByteSlice(t types.Type) bool {
	s, ok := t.Underlying().(*types.Slice)
	if !ok {
		return false
	}
	b, ok := s.Elem().Underlying().(*types.Basic)
	return ok && b.Kind() == types.Byte
}
