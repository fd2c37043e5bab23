package instrument

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gofault/gofault/catalog"
)

// SkipObserveNotFound: the observation point's body was not found.
const SkipObserveNotFound = "observation point not found"

// observeEdits builds the hooks of the observation points of one file,
// inserted after the '{' of the function's body, on the same line. After
// a message is handled:
//
//	defer func() { if gofaultagent.Observing() { gofaultagent.Observe(P, int64(m.Type), uint64(m.From), uint64(m.To), int64(m.Term), ...) } }(); /*line f:L:C*/
//
// before messages are sent, one Observe per message of the slice:
//
//	if gofaultagent.Observing() { for _, gofaultmsg := range msgs { gofaultagent.Observe(P, ...) } }; /*line f:L:C*/
//
// A peer message struct (pt.Message) reports type 0, or, with log
// entries, 1 when it carries any (gofaultagent.Entries(len(a.Entries)));
// a sender or receiver not known there is 0, and one named by a string
// or byte slice is hashed:
//
//	... gofaultagent.Observe(P, 0, gofaultagent.PeerID(args.ID), gofaultagent.PeerID(id), int64(args.Term), ...) ...
//
// Its handled point reads the message as the handler starts and the node
// as it returns (capturedText).
// A message passed by pointer is checked for nil first. Observing is an
// atomic load: the hook costs nothing while no plan asks for observations.
func observeEdits(in fileInput, pts []*catalog.ObservePoint) ([]siteEdit, map[string]string) {
	skipped := map[string]string{}
	if len(pts) == 0 {
		return nil, skipped
	}
	if isCgo(in.file) {
		for _, p := range pts {
			skipped[p.ID] = SkipCgo
		}
		return nil, skipped
	}
	tf := in.fset.File(in.file.Pos())
	var edits []siteEdit
	for _, pt := range pts {
		st := catalog.State{Line: pt.Line, Col: pt.Col}
		off, ok := stateOffset(in, tf, &st)
		if !ok || in.src[off] != '{' {
			skipped[pt.ID] = SkipObserveNotFound
			continue
		}
		p := tf.Position(tf.Pos(off + 1))
		text := fmt.Sprintf(" %s /*line %s:%d:%d*/", observeText(pt), in.lineName, p.Line, p.Column)
		edits = append(edits, siteEdit{observe: pt, start: off + 1, end: off + 1, prefix: text, startLine: p.Line, endLine: p.Line})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	return edits, skipped
}

// observeText is the hook statement of pt.
func observeText(pt *catalog.ObservePoint) string {
	ref := pt.Msg
	if pt.Slice {
		ref = "gofaultmsg"
	}
	args := []string{fmt.Sprint(pt.Index),
		observeType(pt, ref),
		observeID("uint64", pt, ref, pt.From, pt.FromHash),
		observeID("uint64", pt, ref, pt.To, pt.ToHash)}
	for _, v := range pt.Vars {
		args = append(args, fmt.Sprintf("int64(%s)", v.Expr))
	}
	if pt.When == catalog.ObserveHandled && pt.Message != "" {
		return capturedText(pt, args)
	}
	call := fmt.Sprintf("%s.Observe(%s)", agentAlias, strings.Join(args, ", "))
	switch {
	case pt.Slice:
		call = fmt.Sprintf("for _, gofaultmsg := range %s { %s }", pt.Msg, call)
	case pt.Ptr:
		call = fmt.Sprintf("if %s != nil { %s }", pt.Msg, call)
	}
	body := fmt.Sprintf("if %s.Observing() { %s }", agentAlias, call)
	if pt.When == catalog.ObserveHandled {
		return "defer func() { " + body + " }();"
	}
	return body + ";"
}

// observeType is the hook's argument for the message's type: a field or
// expression (observeID), or, for entries (TypeEntries), whether the
// message carries any (agent.Entries).
func observeType(pt *catalog.ObservePoint, ref string) string {
	if pt.TypeEntries && pt.Type != "" {
		return fmt.Sprintf("%s.Entries(len(%s))", agentAlias, pt.Type)
	}
	return observeID("int64", pt, ref, pt.Type, false)
}

// observeID is the hook's argument for one of a point's type, sender and
// receiver (catalog.ObservePoint.Type, From, To), converted to conv: at a
// raftpb-shaped point a field of the message ref, at a peer message
// struct's an expression; "" is 0, and a hashed one goes through
// agent.PeerID.
func observeID(conv string, pt *catalog.ObservePoint, ref, expr string, hash bool) string {
	switch {
	case expr == "":
		return "0"
	case pt.Message == "":
		expr = ref + "." + expr
	}
	if hash {
		return fmt.Sprintf("%s.PeerID(%s)", agentAlias, expr)
	}
	return fmt.Sprintf("%s(%s)", conv, expr)
}

// capturedText is the hook of a peer message struct's handled point
// (observeText's args: the point's index, type, sender, receiver and
// variables): the message's type, sender and fields are read when the
// handler starts, the node's variables and its ID when it returns. A
// handler may give the message back to a pool before it returns
// (nats-server's appendEntry), so a deferred read of the message could
// see another one. While no plan asks for observations, the hook is one
// atomic load and defers nothing:
//
//	if gofaultagent.Observing() && ae != nil { gofaulttyp, gofaultfrom, gofaultmsg := int64(T), uint64(F), [...]int64{int64(ae.term), ...}; defer func() { gofaultagent.Observe(P, gofaulttyp, gofaultfrom, TO, gofaultmsg[0], ..., int64(n.term), ...) }() };
func capturedText(pt *catalog.ObservePoint, args []string) string {
	var msg []string
	final := []string{args[0], "gofaulttyp", "gofaultfrom", args[3]}
	for i, v := range pt.Vars {
		if strings.HasPrefix(v.Name, "msg.") {
			final = append(final, fmt.Sprintf("gofaultmsg[%d]", len(msg)))
			msg = append(msg, args[4+i])
			continue
		}
		final = append(final, args[4+i])
	}
	cond := agentAlias + ".Observing()"
	if pt.Ptr {
		cond += " && " + pt.Msg + " != nil"
	}
	vars, vals := "gofaulttyp, gofaultfrom", fmt.Sprintf("int64(%s), uint64(%s)", args[1], args[2])
	if len(msg) > 0 {
		vars, vals = vars+", gofaultmsg", vals+", [...]int64{"+strings.Join(msg, ", ")+"}"
	}
	return fmt.Sprintf("if %s { %s := %s; defer func() { %s.Observe(%s) }() };",
		cond, vars, vals, agentAlias, strings.Join(final, ", "))
}
