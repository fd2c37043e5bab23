// Package catalog holds the plain data that analysis produces and every later
// stage consumes: the fault sites, task units and abstract states of a target,
// each with a stable ID, and the dense indices that instrumented code passes
// to the agent.
//
// A Catalog is written as catalog.json next to the instrumented build; its
// Hash is linked into the binary so the controller can tell that an agent was
// built from the catalog it holds.
package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Kind is gofault's one vocabulary of fault kinds: a single kind (what a
// policy chooses, what an injection record says) or a set of them (what a
// site can take), as bits. Its JSON and String form are the names, e.g.
// "error" or "error|delay"; the wire protocol's actions and the store's
// text column are mapped to and from it at those edges.
type Kind uint32

// Fault kinds.
const (
	KindNone  Kind = 0
	KindError Kind = 1 << (iota - 1) // the call returns an injected error instead of running
	KindDelay                        // the call (I/O) is slowed down
	KindCrash                        // the process is killed at the call
	// KindPartition cuts the node off from all its peers, both ways, for a
	// while, starting at the call: its peer-network calls (Site.Peer) fail
	// or stall until the partition heals. Client traffic is untouched.
	KindPartition
	// KindPowerLoss is a crash at the call (a site that can crash can
	// lose power) after which what the node wrote but did not sync is
	// lost too (agent/durable). A site's kinds never include it.
	KindPowerLoss
	// KindReboot is a clean restart at the call (a site that can crash
	// can be the moment of one): the node gets its shutdown signal, shuts
	// down as it would for an operator, and is started again. The call
	// itself goes on. A site's kinds never include it.
	KindReboot
	// KindDisconnect cuts one pair of members apart, both ways, for a
	// while, starting at a peer-network call of one of them to the other
	// (a site that can start a partition can start one, when the call's
	// peer is known): their calls to each other fail or stall until it
	// heals; their traffic with the other members and client traffic are
	// untouched. A site's kinds never include it.
	KindDisconnect
	// KindOneWay cuts one member off from another in one direction, for a
	// while, starting at a peer-network call of the first to the second
	// (where a disconnect can start): the first cannot reach the second
	// (its calls whose peer is the second fail or stall until the heal),
	// the second still reaches the first. A site's kinds never include it.
	KindOneWay
	// KindSplit splits the members into two sides for a while, starting
	// at a peer-network call of one member to another (where a disconnect
	// can start): the struck member and the others the policy chose for
	// its side, a minority, against the rest, the callee among them. No
	// traffic crosses between the sides, both ways; within a side it
	// flows. A site's kinds never include it.
	KindSplit
	// KindLeaderCut cuts the leader off from all its peers, both ways, as
	// a partition does, starting right after a call the leader makes (any
	// site: the moment, e.g. its log append before the entry commits). It
	// needs the catalog's role (Catalog.Role with a leader value, see
	// Role.Leader). A site's kinds never include it.
	KindLeaderCut
	// KindCorrupt is a read of a file (a site whose call reads bytes the
	// hook can reach, DiskCallOf) that returns the real bytes with one bit
	// flipped or one 512-byte sector changed: a disk that lies. The real
	// call runs; its bytes are altered after it.
	KindCorrupt
	// KindTorn is a write of a file (a site whose call writes bytes the
	// hook can reach, DiskCallOf) of which only a prefix, cut at a sector
	// boundary, reaches the file; then the node crashes, as at a power
	// failure in the middle of the write.
	KindTorn
	// KindCrashAfter is a crash right after the call returns: the call
	// runs to completion (its bytes written, its fsync, rename or commit
	// returned) and the process is killed before the caller's next
	// instruction, as a crash between two steps of a protocol (etcd's
	// failpoints on each side of such calls: compactAfterCommitBatch).
	// A disk site that can crash has it when its hook could be placed
	// after the call (the rewrite's deferred agent.After).
	KindCrashAfter
	// KindPowerLossAfter is a power loss right after the call returns:
	// a crash after the call, then what the node wrote but did not sync
	// is lost (a call that synced keeps what it synced). A site's kinds
	// never include it; a site with KindCrashAfter can take it.
	KindPowerLossAfter
	// KindPause stops the whole process of the node at the call
	// (SIGSTOP) for a while, then lets it go on (SIGCONT): it keeps its
	// PID, sockets, role and memory, as after a GC pause or a VM stall;
	// its peers and clients must route around it, and on waking it must
	// notice that the world moved on. The fault's delay is the pause's
	// length, chosen from the target's timers (faults.timers). The call
	// itself goes on. A site's kinds never include it; a site that can
	// crash can take it.
	KindPause
	// KindStop kills the node at the call, as KindCrash does, and starts
	// it again only after a while (the fault's delay, chosen from the
	// target's timers, faults.timers: shorter than, around or longer
	// than its election timeout or its leader's back-off) instead of at
	// once. A site's kinds never include it; a site that can crash can
	// take it.
	KindStop
	// KindRot is a write of a file (a site that can take KindTorn) whose
	// bytes reach the file whole but with one bit flipped or one 512-byte
	// sector changed — corruption at rest: every later read sees the same
	// wrong bytes until they are rewritten —, then the node crashes, and
	// its restart reads them back (its checksums must catch them). Beside
	// KindCorrupt, a read's transient change. A site's kinds never
	// include it; a site with KindTorn can take it.
	KindRot
)

// kindNames are the names of the single kinds, in bit order.
var kindNames = []struct {
	k    Kind
	name string
}{{KindError, "error"}, {KindDelay, "delay"}, {KindCrash, "crash"}, {KindPartition, "partition"}, {KindPowerLoss, "powerloss"}, {KindReboot, "reboot"}, {KindDisconnect, "disconnect"}, {KindOneWay, "oneway"}, {KindSplit, "split"}, {KindLeaderCut, "leadercut"}, {KindCorrupt, "corrupt"}, {KindTorn, "torn"}, {KindCrashAfter, "crash-after"}, {KindPowerLossAfter, "powerloss-after"}, {KindPause, "pause"}, {KindStop, "stop"}, {KindRot, "rot"}}

// Kills reports whether a fault of kind k ends the process (a crash, a
// power loss, before or after the call, a reboot, a torn or rotten write
// or a stop), which is then restarted.
func (k Kind) Kills() bool {
	return k&(KindCrash|KindPowerLoss|KindReboot|KindTorn|KindCrashAfter|KindPowerLossAfter|KindStop|KindRot) != 0
}

// Holds reports whether a fault of kind k lasts its delay: a delay, a cut
// (Cuts), a pause, or a stop (the node stays down that long).
func (k Kind) Holds() bool {
	return k == KindDelay || k == KindPause || k == KindStop || k.Cuts()
}

// After reports whether k strikes after its call returned (crash-after,
// powerloss-after) rather than at or instead of it.
func (k Kind) After() bool { return k&(KindCrashAfter|KindPowerLossAfter) != 0 }

// Before returns the kind that strikes at the call for an after-call
// kind (KindCrash for KindCrashAfter, KindPowerLoss for
// KindPowerLossAfter), and k itself for any other.
func (k Kind) Before() Kind {
	switch k {
	case KindCrashAfter:
		return KindCrash
	case KindPowerLossAfter:
		return KindPowerLoss
	}
	return k
}

// SiteKind is the kind a site must have to take a fault of kind k: a rot
// strikes the writes a torn write does (KindTorn); any other kind, itself.
func (k Kind) SiteKind() Kind {
	if k == KindRot {
		return KindTorn
	}
	return k
}

// Cuts reports whether k cuts members' peer traffic for a while (its
// length is the fault's delay): a partition, disconnect, one-way cut,
// split or leader cut.
func (k Kind) Cuts() bool {
	return k != KindNone && k&^(KindPartition|KindDisconnect|KindOneWay|KindSplit|KindLeaderCut) == 0
}

// Has reports whether k includes all kinds of o.
func (k Kind) Has(o Kind) bool { return k&o == o }

// String returns "none", a kind's name, or the names of a set joined by "|".
func (k Kind) String() string {
	if k == KindNone {
		return "none"
	}
	var names []string
	for _, n := range kindNames {
		if k&n.k != 0 {
			names = append(names, n.name)
			k &^= n.k
		}
	}
	if k != 0 {
		names = append(names, fmt.Sprintf("kind(%d)", uint32(k)))
	}
	return strings.Join(names, "|")
}

// ParseKind parses a name String returns, e.g. "delay" or "error|crash";
// "" and "none" are KindNone.
func ParseKind(s string) (Kind, error) {
	var k Kind
	if s == "" || s == "none" {
		return KindNone, nil
	}
	for _, part := range strings.Split(s, "|") {
		found := false
		for _, n := range kindNames {
			if n.name == part {
				k, found = k|n.k, true
			}
		}
		if !found {
			return KindNone, fmt.Errorf("unknown fault kind %q (want one of %s)", part, kindList())
		}
	}
	return k, nil
}

// kindList is every single kind's name, "error, delay, … or stop".
func kindList() string {
	names := make([]string, len(kindNames))
	for i, n := range kindNames {
		names[i] = n.name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// MarshalJSON writes the kind's name.
func (k Kind) MarshalJSON() ([]byte, error) { return json.Marshal(k.String()) }

// UnmarshalJSON reads a name, or the number of the bits (as catalogs
// written before kinds had names hold).
func (k *Kind) UnmarshalJSON(data []byte) error {
	var n uint16
	if err := json.Unmarshal(data, &n); err == nil {
		*k = Kind(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("fault kind: %w", err)
	}
	v, err := ParseKind(s)
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Site is one call site where a fault can be injected.
type Site struct {
	// Index is the dense index passed to the agent's hooks; it equals the
	// site's position in Catalog.Sites.
	Index uint32 `json:"index"`
	// ID is stable across rebuilds and unrelated edits of the same source:
	// it is derived from package, enclosing function, callee and ordinal,
	// never from line numbers.
	ID     string `json:"id"`
	Kind   Kind   `json:"kind"`   // the kinds of fault the site can take
	Pkg    string `json:"pkg"`    // import path of the package holding the call
	Func   string `json:"func"`   // enclosing function, e.g. "(*Log).append"
	Callee string `json:"callee"` // called function, e.g. "(*os.File).Write"
	// File, Line and Col locate the call's opening parenthesis
	// (ast.CallExpr.Lparen, which is ssa.CallCommon.Pos()) in the files that
	// are instrumented. They change with edits and are not part of ID.
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	// IO classifies the I/O behind the call: "disk", "net" or "" when the
	// error is constructed by the target itself.
	IO string `json:"io,omitempty"`
	// Next is, for a site that can crash after its call
	// (KindCrashAfter), the callee of the next disk call of the same
	// function in source order (e.g. "os.Rename"): the window a crash
	// right after this call falls in, before that call; "" when the
	// function makes none after it.
	Next string `json:"next,omitempty"`
	// Errors are the realistic error values the call can return; the agent
	// hook's result k ≥ 1 selects Errors[k-1].
	Errors []ErrorValue `json:"errors,omitempty"`
	// Context found by later analysis passes (lock held, timeout, ...).
	LockHeld bool `json:"lock_held,omitempty"`
	Barrier  bool `json:"barrier,omitempty"`
	Timeout  bool `json:"timeout,omitempty"`
	// Timeouts are the indices of the TimeoutPoints whose timeout guards
	// this call (Sieve's timeout-protected I/O), so delays can be sized
	// from the values observed at run time.
	Timeouts []uint32 `json:"timeouts,omitempty"`
	// Block is a stable ID of the basic block holding the call; Rep marks
	// the one site per block that stands for the block's I/O (Sieve's
	// grouping: the last I/O call of the block).
	Block string `json:"block,omitempty"`
	Rep   bool   `json:"rep,omitempty"`
	// Peer is set on the calls of the peer network (PartitionPass): how
	// the call talks to another member — PeerDial, PeerRead, PeerWrite,
	// PeerAccept or PeerSend — and so how a partition of the node acts on
	// it.
	Peer string `json:"peer,omitempty"`
	// FileRole is, at a file read or write whose bytes a disk fault can
	// reach (KindCorrupt, KindTorn), the role of the file the call reads
	// or writes as the analysis classified it: FileLog, FileSnapshot,
	// FileMetadata or FileData.
	FileRole string `json:"file_role,omitempty"`
}

// Peer-network operations (Site.Peer).
const (
	PeerDial   = "dial"   // a new connection or request to a peer: fails at once while cut
	PeerRead   = "read"   // a read from a peer connection: stalls until the heal
	PeerWrite  = "write"  // a write to a peer connection: stalls until the heal
	PeerAccept = "accept" // a peer's request being accepted: stalls until the heal
	// PeerSend is the entry of an in-process transport's send to another
	// member of the same process (gofault test's test.transport.send):
	// while cut it returns the transport's error for an unreachable peer
	// (the site's first error) at once.
	PeerSend = "send"
)

// TimeoutPoint is an expression whose value is a timeout: the duration
// passed to context.WithTimeout, time.After, a SetDeadline computation, or
// the constant compared with time.Since. The instrumenter wraps it as
// agent.Timeout(Index, expr) so the value used at run time is reported.
type TimeoutPoint struct {
	Index uint32 `json:"index"` // dense, 0-based: its position in Catalog.TimeoutPoints
	ID    string `json:"id"`
	Pkg   string `json:"pkg"`
	Func  string `json:"func"`
	// Kind names the construct: "WithTimeout", "WithDeadline", "After",
	// "NewTimer", "SetDeadline", "Since".
	Kind string `json:"kind"`
	// File, Line and Col locate the start of the duration expression.
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// ErrorValue is one error a site can return.
type ErrorValue struct {
	// Name is short and human, e.g. "EIO", "ECONNRESET", "ErrCompacted".
	Name string `json:"name"`
	// Expr is a Go expression of type error that builds the value, e.g.
	// `&fs.PathError{Op: "write", Path: "", Err: syscall.EIO}`, using the
	// package names of Imports.
	Expr string `json:"expr"`
	// Imports are the import paths Expr needs.
	Imports []string `json:"imports,omitempty"`
}

// Task is a task unit: a function started by a go statement, or a
// long-running loop in one.
type Task struct {
	Index uint32 `json:"index"` // dense, 1-based (0 means "no task")
	ID    string `json:"id"`
	Pkg   string `json:"pkg"`
	Func  string `json:"func"`
}

// State is an abstract state of a task unit.
type State struct {
	Index uint32 `json:"index"` // dense, 1-based within the catalog
	ID    string `json:"id"`
	Task  uint32 `json:"task"` // Task.Index
	// Pkg and Func name the function holding the branch (the task's
	// function or a method it calls from its loop).
	Pkg  string `json:"pkg,omitempty"`
	Func string `json:"func,omitempty"`
	// Cond describes the branch that starts the state, for humans.
	Cond string `json:"cond"`
	// File, Line and Col locate where the state hook is inserted: after
	// the opening brace of the block or the colon of the case clause
	// that starts the state, or, for the state a guard clause leads to
	// (if !leader { continue }; ...), after the closing brace of the
	// guard's if statement.
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
	// Inst is a Go expression, valid at the start of that block, whose
	// pointer value identifies the task instance (e.g. the receiver "n");
	// empty when the task has no instance (package-level state).
	Inst string `json:"inst,omitempty"`
}

// Role is the variable that holds a node's role (leader, follower, ...):
// a struct field whose type is, or is written from, a named integer type
// with constants naming a leader and a follower. Instrumented code reports
// every write of it (agent.Role), so each request carries the node's
// current role.
type Role struct {
	Pkg   string `json:"pkg"`   // import path of the package declaring Type
	Type  string `json:"type"`  // the struct type holding the field, e.g. "raft"
	Field string `json:"field"` // e.g. "state"
	// RoleType is the named integer type of the values, e.g. "StateType".
	RoleType string `json:"role_type"`
	// Values are the role type's constants, by value.
	Values []RoleValue `json:"values"`
	// Writes are the statements that write the field after construction;
	// each gets a hook.
	Writes []RoleWrite `json:"writes,omitempty"`
	// Method is the role method target.role named, which reads Field:
	// "(*server).State"; empty when the role was given or found as a field.
	Method string `json:"method,omitempty"`
	// LeaderValue is the name of the value Method compares the field with
	// (IsLeader's r.state == Leader), which Leader returns; empty when
	// Method compares with none, and Leader goes by the values' names.
	LeaderValue string `json:"leader_value,omitempty"`
}

// RoleValue is one constant of a role type.
type RoleValue struct {
	Value int64  `json:"value"`
	Name  string `json:"name"` // e.g. "StateLeader"
}

// Role write shapes.
const (
	WriteAssign = "assign" // x.f = v
	WriteAtomic = "atomic" // atomic.StoreUint32((*uint32)(&x.f), uint32(v))
	WriteMethod = "method" // x.f.Store(int32(v)) on a sync/atomic type
)

// RoleWrite is one write of the role field.
type RoleWrite struct {
	// ID is stable across edits that move code: "role:pkg.Func#n".
	ID   string `json:"id"`
	Pkg  string `json:"pkg"`
	Func string `json:"func"`
	// Shape is WriteAssign, WriteAtomic or WriteMethod.
	Shape string `json:"shape"`
	// File, Line and Col locate the written field's name (WriteAssign) or
	// the call's opening parenthesis (the atomic shapes).
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// String names the field: "pkg/path.Type.field".
func (r *Role) String() string { return r.Pkg + "." + r.Type + "." + r.Field }

// Name returns the name of role value v, or "" if v is no constant of the
// role type (or r is nil).
func (r *Role) Name(v int64) string {
	if r == nil {
		return ""
	}
	for _, x := range r.Values {
		if x.Value == v {
			return x.Name
		}
	}
	return ""
}

// Leader returns the name of the role type's leader constant: LeaderValue
// when it is one of the values, else the one whose name ends in "leader",
// any case ("StateLeader", "Leader", "roleLeader"); and whether there is
// exactly one; false for a nil r.
func (r *Role) Leader() (string, bool) {
	if r == nil {
		return "", false
	}
	if r.LeaderValue != "" {
		for _, x := range r.Values {
			if x.Name == r.LeaderValue {
				return x.Name, true
			}
		}
	}
	var found []string
	for _, x := range r.Values {
		if strings.HasSuffix(strings.ToLower(x.Name), "leader") {
			found = append(found, x.Name)
		}
	}
	if len(found) != 1 {
		return "", false
	}
	return found[0], true
}

// Catalog is everything analysis found in a target.
type Catalog struct {
	Module string  `json:"module"`
	Sites  []Site  `json:"sites"`
	Tasks  []Task  `json:"tasks,omitempty"`
	States []State `json:"states,omitempty"`
	// Role is the node's role variable, nil when none was found.
	Role *Role `json:"role,omitempty"`
	// TimeoutPoints are the timeout expressions found by the Sieve passes.
	TimeoutPoints []TimeoutPoint `json:"timeout_points,omitempty"`
	// ObservePoints are where peer messages are observed (observe.go).
	ObservePoints []ObservePoint `json:"observation_points,omitempty"`
	// Blocks is the number of basic blocks the build counts for coverage
	// (indices 0 to Blocks-1 of the agent's table); 0 when it counts none.
	// The instrumenter numbers them; BlockFiles locate them.
	Blocks     int         `json:"blocks,omitempty"`
	BlockFiles []BlockFile `json:"block_files,omitempty"`
	// Hash identifies the catalog's contents; see ComputeHash.
	Hash string `json:"hash"`
}

// BlockFile locates the counted blocks of one file: block First+i starts
// at line Lines[i] of File (the file's original path).
type BlockFile struct {
	File  string `json:"file"`
	First int    `json:"first"`
	Lines []int  `json:"lines"`
}

// BlockPos returns the file and line where block i starts, or "" and 0.
func (c *Catalog) BlockPos(i int) (string, int) {
	for _, f := range c.BlockFiles {
		if i >= f.First && i < f.First+len(f.Lines) {
			return f.File, f.Lines[i-f.First]
		}
	}
	return "", 0
}

// Parts are everything a catalog is made of, as analysis finds it: New
// numbers and hashes them.
type Parts struct {
	Module        string
	Sites         []Site
	Tasks         []Task
	States        []State
	TimeoutPoints []TimeoutPoint
	ObservePoints []ObservePoint
	// Role is the node's role variable with its writes, nil when none was
	// found.
	Role *Role
}

// New returns the catalog made of p, complete: numbered as the hooks see
// it — sites, timeout points and observation points from 0 and tasks and
// states from 1, each in the order given — and hashed. A state names its
// task, and a site its timeout points, by those numbers (their positions).
// IDs must be unique within each kind (role writes included). The catalog
// shares p's slices.
func New(p Parts) (*Catalog, error) {
	c := &Catalog{Module: p.Module, Sites: p.Sites, Tasks: p.Tasks, States: p.States,
		TimeoutPoints: p.TimeoutPoints, ObservePoints: p.ObservePoints, Role: p.Role}
	if err := c.number(); err != nil {
		return nil, err
	}
	return c, nil
}

// Without returns a copy of c without the sites, states, timeout points
// and role writes whose IDs are in ids, renumbered consistently (sites'
// timeout references follow their points) and rehashed. Tasks stay, so
// states keep their task numbers. c is not changed.
func (c *Catalog) Without(ids map[string]bool) *Catalog {
	out := &Catalog{Module: c.Module, Tasks: slices.Clone(c.Tasks)}
	if c.Role != nil {
		r := *c.Role
		r.Writes = nil
		for _, w := range c.Role.Writes {
			if !ids[w.ID] {
				r.Writes = append(r.Writes, w)
			}
		}
		out.Role = &r
	}
	renum := map[uint32]uint32{} // old timeout point index -> new
	for _, p := range c.TimeoutPoints {
		if ids[p.ID] {
			continue
		}
		renum[p.Index] = uint32(len(out.TimeoutPoints))
		out.TimeoutPoints = append(out.TimeoutPoints, p)
	}
	for _, s := range c.Sites {
		if ids[s.ID] {
			continue
		}
		if len(s.Timeouts) > 0 {
			var ts []uint32
			for _, x := range s.Timeouts {
				if y, ok := renum[x]; ok {
					ts = append(ts, y)
				}
			}
			s.Timeouts = ts
		}
		out.Sites = append(out.Sites, s)
	}
	for _, s := range c.States {
		if !ids[s.ID] {
			out.States = append(out.States, s)
		}
	}
	for _, o := range c.ObservePoints {
		if !ids[o.ID] {
			out.ObservePoints = append(out.ObservePoints, o)
		}
	}
	if err := out.number(); err != nil {
		panic(err) // a subset of a numbered catalog has unique IDs
	}
	return out
}

// number assigns the dense indices in slice order, checks that IDs are
// unique within each kind and that references are in range, and sets Hash.
func (c *Catalog) number() error {
	seen := map[string]bool{}
	unique := func(kind, id string) error {
		if seen[kind+" "+id] {
			return fmt.Errorf("catalog: two %ss with ID %s", kind, id)
		}
		seen[kind+" "+id] = true
		return nil
	}
	for i := range c.Sites {
		c.Sites[i].Index = uint32(i)
		if err := unique("site", c.Sites[i].ID); err != nil {
			return err
		}
		for _, t := range c.Sites[i].Timeouts {
			if int(t) >= len(c.TimeoutPoints) {
				return fmt.Errorf("catalog: site %s names timeout point %d of %d", c.Sites[i].ID, t, len(c.TimeoutPoints))
			}
		}
	}
	for i := range c.Tasks {
		c.Tasks[i].Index = uint32(i + 1)
		if err := unique("task", c.Tasks[i].ID); err != nil {
			return err
		}
	}
	for i := range c.States {
		c.States[i].Index = uint32(i + 1)
		if err := unique("state", c.States[i].ID); err != nil {
			return err
		}
		if t := c.States[i].Task; t == 0 || int(t) > len(c.Tasks) {
			return fmt.Errorf("catalog: state %s names task %d of %d", c.States[i].ID, t, len(c.Tasks))
		}
	}
	for i := range c.TimeoutPoints {
		c.TimeoutPoints[i].Index = uint32(i)
		if err := unique("timeout point", c.TimeoutPoints[i].ID); err != nil {
			return err
		}
	}
	for i := range c.ObservePoints {
		c.ObservePoints[i].Index = uint32(i)
		if err := unique("observation point", c.ObservePoints[i].ID); err != nil {
			return err
		}
	}
	if c.Role != nil {
		for _, w := range c.Role.Writes {
			if err := unique("role write", w.ID); err != nil {
				return err
			}
		}
	}
	c.Hash = c.ComputeHash()
	return nil
}

// ComputeHash returns a hash of the stable parts of the catalog: the IDs,
// kinds and error names of its sites, tasks and states, in index order,
// and the role field with its values and writes.
// Display fields such as File and Line do not contribute, so a rebuild after
// an edit that only moves code keeps the hash.
func (c *Catalog) ComputeHash() string {
	h := sha256.New()
	for i := range c.Sites {
		s := &c.Sites[i]
		fmt.Fprintf(h, "s %d %s %d", s.Index, s.ID, s.Kind)
		for _, e := range s.Errors {
			fmt.Fprintf(h, " %s", e.Name)
		}
		h.Write([]byte{'\n'})
	}
	for _, t := range c.Tasks {
		fmt.Fprintf(h, "t %d %s\n", t.Index, t.ID)
	}
	for _, s := range c.States {
		fmt.Fprintf(h, "a %d %s %d\n", s.Index, s.ID, s.Task)
	}
	for _, p := range c.TimeoutPoints {
		fmt.Fprintf(h, "o %d %s\n", p.Index, p.ID)
	}
	for _, o := range c.ObservePoints {
		fmt.Fprintf(h, "b %d %s %d\n", o.Index, o.ID, len(o.Vars))
	}
	if r := c.Role; r != nil {
		fmt.Fprintf(h, "r %s", r)
		for _, v := range r.Values {
			fmt.Fprintf(h, " %d=%s", v.Value, v.Name)
		}
		for _, w := range r.Writes {
			fmt.Fprintf(h, " %s", w.ID)
		}
		if r.Method != "" || r.LeaderValue != "" { // roles of fields keep their hashes
			fmt.Fprintf(h, " m %s %s", r.Method, r.LeaderValue)
		}
		h.Write([]byte{'\n'})
	}
	if c.Blocks > 0 { // catalogs without counters keep their hashes
		// File names without their directories, which differ between
		// checkouts and machines of the same source.
		fmt.Fprintf(h, "c %d\n", c.Blocks)
		for _, f := range c.BlockFiles {
			fmt.Fprintf(h, "f %s %d %v\n", filepath.Base(f.File), f.First, f.Lines)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Site returns the site with index i, or nil.
func (c *Catalog) Site(i uint32) *Site {
	if int(i) >= len(c.Sites) {
		return nil
	}
	return &c.Sites[i]
}

// State returns the state with index i, or nil.
func (c *Catalog) State(i uint32) *State {
	if i == 0 || int(i) > len(c.States) {
		return nil
	}
	return &c.States[i-1]
}

// Task returns the task with index i, or nil.
func (c *Catalog) Task(i uint32) *Task {
	if i == 0 || int(i) > len(c.Tasks) {
		return nil
	}
	return &c.Tasks[i-1]
}

// Check verifies the dense indices and the hash.
func (c *Catalog) Check() error {
	for i := range c.Sites {
		if c.Sites[i].Index != uint32(i) {
			return fmt.Errorf("catalog: site %q has index %d, want %d", c.Sites[i].ID, c.Sites[i].Index, i)
		}
	}
	for i := range c.Tasks {
		if c.Tasks[i].Index != uint32(i+1) {
			return fmt.Errorf("catalog: task %q has index %d, want %d", c.Tasks[i].ID, c.Tasks[i].Index, i+1)
		}
	}
	for i := range c.States {
		if c.States[i].Index != uint32(i+1) {
			return fmt.Errorf("catalog: state %q has index %d, want %d", c.States[i].ID, c.States[i].Index, i+1)
		}
	}
	for i := range c.TimeoutPoints {
		if c.TimeoutPoints[i].Index != uint32(i) {
			return fmt.Errorf("catalog: timeout point %q has index %d, want %d", c.TimeoutPoints[i].ID, c.TimeoutPoints[i].Index, i)
		}
	}
	next := 0
	for _, f := range c.BlockFiles {
		if f.First != next {
			return fmt.Errorf("catalog: the blocks of %s start at %d, want %d", f.File, f.First, next)
		}
		next += len(f.Lines)
	}
	if next != c.Blocks {
		return fmt.Errorf("catalog: %d blocks located, want %d", next, c.Blocks)
	}
	if c.Hash != "" && c.Hash != c.ComputeHash() {
		return fmt.Errorf("catalog: hash %s does not match contents (%s)", c.Hash, c.ComputeHash())
	}
	return nil
}

// Load reads a catalog.json file.
func Load(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	var c Catalog
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("parse catalog %s: %w", path, err)
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// Save writes the catalog as indented JSON, setting Hash first.
func (c *Catalog) Save(path string) error {
	c.Hash = c.ComputeHash()
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode catalog: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write catalog: %w", err)
	}
	return nil
}
