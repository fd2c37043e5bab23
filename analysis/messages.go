package analysis

import (
	"go/ast"
	"go/types"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// peerMessage is a struct that a target sends to its peers and that has
// no integer Type, From and To (those are raftpb-shaped, messageStruct):
// hashicorp/raft's RPC requests and responses, nats-server's appendEntry
// and voteRequest.
type peerMessage struct {
	named *types.Named
	st    *types.Struct
	// from is the field (direct or promoted from an embedded struct) that
	// names the sender: an integer, string or byte slice.
	from     string
	fromHash bool       // from is a string or byte slice
	fromType types.Type // from's type
	// encoders are the message's own encode methods (send points).
	encoders []*types.Func
	// ifaces are the target's interface methods that take the message:
	// their implementations send it (send points).
	ifaces []*types.Func
}

// senderNames are the names of a message's field that names its sender,
// most telling first: hashicorp/raft's RPCHeader.ID, nats-server's
// appendEntry.leader, voteRequest.candidate, appendEntryResponse.peer.
var senderNames = []string{"id", "from", "sender", "src", "source", "leader", "candidate", "peer", "node"}

// receiverParams are the names of a send function's parameter that names
// the receiver (hashicorp/raft's Transport.AppendEntries(id, target, ...)),
// most telling first.
var receiverParams = []string{"id", "to", "peer", "dest", "dst", "target", "node"}

// selfID matches a node's field that holds its own ID (hashicorp/raft's
// Raft.localID, nats-server's raft.id): the receiver of what it handles.
var selfID = regexp.MustCompile(`(?i)^(local|self|my|node)?id$`)

// entriesName matches the name of a message's field that holds the log
// entries it carries: hashicorp/raft's AppendEntriesRequest.Entries,
// nats-server's appendEntry.entries.
var entriesName = regexp.MustCompile(`(?i)^(entries|ents|logs)$`)

// entriesField returns st's own slice field named like entriesName, "" if
// none: a message with one is of type 1 when it carries entries and 0
// when it carries none (a heartbeat).
func entriesField(st *types.Struct) string {
	for i := range st.NumFields() {
		fd := st.Field(i)
		if _, ok := fd.Type().Underlying().(*types.Slice); ok && !fd.Embedded() && entriesName.MatchString(fd.Name()) {
			return fd.Name()
		}
	}
	return ""
}

// encoderName matches the method that encodes a message for the wire.
var encoderName = regexp.MustCompile(`(?i)^(encode|marshal)$`)

// handlerName matches the name of a method that handles a message of
// another type: process…, handle…, step…, on…, recv…, receive…, deliver….
// A method whose name begins its message type's name handles it too
// (hashicorp/raft's appendEntries of AppendEntriesRequest).
var handlerName = regexp.MustCompile(`^(?i:process|handle|step|recv|receive|deliver)|^(on|On)[A-Z]`)

// idKind says whether t can name a peer: an integer (used as is) or a
// string or byte slice (hashed by the hook); ok is false otherwise.
func idKind(t types.Type) (hash, ok bool) {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsInteger != 0:
			return false, true
		case u.Info()&types.IsString != 0:
			return true, true
		}
	case *types.Slice:
		if b, isBasic := u.Elem().Underlying().(*types.Basic); isBasic && b.Kind() == types.Byte {
			return true, true
		}
	}
	return false, false
}

// senderField returns the field of st that names the message's sender,
// looked up in st's own fields and then those of its embedded structs.
func senderField(st *types.Struct) (string, bool, types.Type) {
	type field struct {
		name string
		hash bool
		t    types.Type
	}
	fields := map[string]field{}
	add := func(s *types.Struct, promoted bool) {
		for i := range s.NumFields() {
			fd := s.Field(i)
			if fd.Embedded() {
				continue
			}
			if hash, ok := idKind(fd.Type()); ok {
				k := strings.ToLower(fd.Name())
				if _, dup := fields[k]; !dup || !promoted {
					fields[k] = field{fd.Name(), hash, fd.Type()}
				}
			}
		}
	}
	add(st, false)
	for i := range st.NumFields() {
		if fd := st.Field(i); fd.Embedded() {
			if es, ok := derefStruct(fd.Type()); ok {
				add(es, true)
			}
		}
	}
	for _, n := range senderNames {
		if f, ok := fields[n]; ok {
			return f.name, f.hash, f.t
		}
	}
	return "", false, nil
}

func derefStruct(t types.Type) (*types.Struct, bool) {
	if ptr, ok := t.Underlying().(*types.Pointer); ok {
		t = ptr.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	return st, ok
}

// namedStruct returns the named struct type of t or *t.
func namedStruct(t types.Type) (*types.Named, *types.Struct) {
	if ptr, ok := t.Underlying().(*types.Pointer); ok {
		t = ptr.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return nil, nil
	}
	st, ok := n.Underlying().(*types.Struct)
	if !ok {
		return nil, nil
	}
	return n, st
}

// intFields counts st's own integer fields.
func intFields(st *types.Struct) int {
	n := 0
	for i := range st.NumFields() {
		if fd := st.Field(i); !fd.Embedded() && isInteger(fd.Type()) {
			n++
		}
	}
	return n
}

// peerMessages finds the peer messages of the target packages: structs
// declared there, not raftpb-shaped, with an integer field and a sender
// field, that are encoded by a method of their own returning []byte
// (nats-server's (*appendEntry).encode) or passed by pointer to a method
// of an interface declared there (hashicorp/raft's Transport).
func peerMessages(p *Program) map[*types.Named]*peerMessage {
	out := map[*types.Named]*peerMessage{}
	get := func(t types.Type) *peerMessage {
		n, st := namedStruct(t)
		if n == nil || !p.IsTarget(n.Obj().Pkg()) || messageStruct(n) != nil || intFields(st) == 0 {
			return nil
		}
		if m := out[n]; m != nil {
			return m
		}
		from, hash, ft := senderField(st)
		if ft == nil {
			return nil
		}
		m := &peerMessage{named: n, st: st, from: from, fromHash: hash, fromType: ft}
		out[n] = m
		return m
	}
	for _, sp := range p.Targets {
		scope := sp.Pkg.Scope()
		for _, name := range scope.Names() {
			tn, ok := scope.Lookup(name).(*types.TypeName)
			if !ok {
				continue
			}
			named, ok := types.Unalias(tn.Type()).(*types.Named)
			if !ok {
				continue
			}
			if iface, ok := named.Underlying().(*types.Interface); ok {
				for i := range iface.NumExplicitMethods() {
					fn := iface.ExplicitMethod(i)
					params := fn.Type().(*types.Signature).Params()
					for j := range params.Len() {
						if _, ptr := params.At(j).Type().(*types.Pointer); !ptr {
							continue
						}
						if m := get(params.At(j).Type()); m != nil && !containsFunc(m.ifaces, fn) {
							m.ifaces = append(m.ifaces, fn)
						}
					}
				}
				continue
			}
			for i := range named.NumMethods() {
				fn := named.Method(i)
				if !encoderName.MatchString(fn.Name()) {
					continue
				}
				res := fn.Type().(*types.Signature).Results()
				if res.Len() == 0 || !types.Identical(res.At(0).Type(), types.NewSlice(types.Typ[types.Byte])) {
					continue
				}
				if m := get(named); m != nil {
					m.encoders = append(m.encoders, fn)
				}
			}
		}
	}
	return out
}

func containsFunc(fs []*types.Func, f *types.Func) bool {
	for _, g := range fs {
		if g == f {
			return true
		}
	}
	return false
}

// sendsVia reports whether method f implements one of m's interface
// methods (the same name, its receiver's type implementing the
// interface) or is one of its encoders.
func (m *peerMessage) sendsVia(f *ssa.Function) bool {
	recv := f.Signature.Recv()
	if recv == nil {
		return false
	}
	if obj, ok := f.Object().(*types.Func); ok && containsFunc(m.encoders, obj) {
		return true
	}
	for _, fn := range m.ifaces {
		if fn.Name() != f.Name() {
			continue
		}
		iface, ok := fn.Type().(*types.Signature).Recv().Type().Underlying().(*types.Interface)
		if ok && types.Implements(recv.Type(), iface) {
			return true
		}
	}
	return false
}

// handledBy reports whether a method named name handles messages of type
// m: a handler's name, or the start of the message type's name.
func (m *peerMessage) handledBy(name string) bool {
	if handlerName.MatchString(name) {
		return true
	}
	return len(name) >= 4 && strings.HasPrefix(strings.ToLower(m.named.Obj().Name()), strings.ToLower(name))
}

// handledMessages keeps of msgs those that a node handles (a method of a
// type with state variables, named like a handler, takes one: handler)
// and those of the same family as one it handles: declared in the same
// package, sent the same way (an encoder of the same name, or a method of
// the same interface) and naming their sender with the same type
// (nats-server's voteResponse beside voteRequest). What no node handles
// and resembles nothing handled is no peer message but a request, a
// record or a lease that happens to carry an ID (etcd's RequestV2,
// leasepb.Lease, mvcc's watcher).
func handledMessages(p *Program, msgs []*peerMessage) []*peerMessage {
	handled := map[*peerMessage]bool{}
	for _, sp := range p.Targets {
		for _, f := range packageFunctions(sp) {
			for _, m := range msgs {
				if !handled[m] && handler(f, m, msgs) != nil {
					handled[m] = true
				}
			}
		}
	}
	var out []*peerMessage
	for _, m := range msgs {
		if handled[m] || slices.ContainsFunc(msgs, func(h *peerMessage) bool { return handled[h] && sameFamily(m, h) }) {
			out = append(out, m)
		}
	}
	return out
}

// handler returns the declaration of f if f handles messages of type m:
// a method, not of a message type, named like a handler of m, that takes
// one and has state variables to observe.
func handler(f *ssa.Function, m *peerMessage, msgs []*peerMessage) *ast.FuncDecl {
	sig := f.Signature
	if sig.Recv() == nil || isAnyMessage(sig.Recv().Type(), msgs) || messageParamIndex(sig, m) < 0 || !m.handledBy(f.Name()) {
		return nil
	}
	decl, ok := f.Syntax().(*ast.FuncDecl)
	if !ok || decl.Body == nil || len(nodeVars(sig.Recv(), recvName(decl))) == 0 {
		return nil
	}
	return decl
}

// sameFamily reports whether m and h are declared in the same package,
// name their senders with the same type and are sent the same way.
func sameFamily(m, h *peerMessage) bool {
	if m.named.Obj().Pkg() != h.named.Obj().Pkg() || !types.Identical(m.fromType, h.fromType) {
		return false
	}
	for _, e := range m.encoders {
		if slices.ContainsFunc(h.encoders, func(g *types.Func) bool { return g.Name() == e.Name() }) {
			return true
		}
	}
	for _, fn := range m.ifaces {
		recv := fn.Type().(*types.Signature).Recv().Type()
		if slices.ContainsFunc(h.ifaces, func(g *types.Func) bool {
			return types.Identical(g.Type().(*types.Signature).Recv().Type(), recv)
		}) {
			return true
		}
	}
	return false
}

// sortedMessages returns msgs sorted by their types' names, for stable
// matching.
func sortedMessages(msgs map[*types.Named]*peerMessage) []*peerMessage {
	out := make([]*peerMessage, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].named.Obj().Pkg().Path()+"."+out[i].named.Obj().Name() < out[j].named.Obj().Pkg().Path()+"."+out[j].named.Obj().Name()
	})
	return out
}
