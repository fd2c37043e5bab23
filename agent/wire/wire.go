// Package wire is gofault's agent protocol: length-prefixed binary frames
// exchanged over one persistent stream connection (a unix socket or loopback
// TCP) between a process and the campaign controller.
//
// Every frame is a 4-byte big-endian length n (1 ≤ n ≤ MaxFrame), then n
// bytes: a one-byte message Type followed by the message payload. Integers in
// payloads are unsigned varints, strings and byte slices are a varint length
// followed by their bytes. A connection starts with Hello from the process and
// Welcome from the controller; after that the controller pushes Plans and
// Responses, and the process sends Requests, Events and finally Bye.
//
// The package depends on the standard library only, because the agent module
// that instrumented programs link must.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Version is the protocol version carried in Hello and Welcome. Version 2
// added the node's role to Request and the EvRole event; version 3 the
// partition's ActStall, FlagObserve and the EvObserve event; version 4 the
// EvCover event (basic blocks newly covered); version 5 the peer address
// of Request and FlagPeers (disconnects); version 6 the disk faults'
// ActCorrupt and ActTear and the EvDisk event; version 7 the number of
// the read a corruption changed (EvDisk's D >> 8); version 8 the member of
// Request and FlagMembers (members of an in-process cluster); version 9
// the peer member of Request (PeerSeq: in-process transport sends);
// version 10 ActCrashAfter and Request.After (a crash right after the
// call returned); version 11 ActRot (a write whose bytes rot on the disk);
// version 12 ActHold and Plan.Holding (a delay held until a condition).
const Version = 12

// MaxFrame is the largest frame (type byte plus payload) a Reader accepts.
const MaxFrame = 1 << 20

// Type identifies a message.
type Type uint8

// Message types.
const (
	THello    Type = 1 // process → controller, first frame
	TWelcome  Type = 2 // controller → process, answers Hello with the first plan
	TPlan     Type = 3 // controller → process, replaces the live plan
	TRequest  Type = 4 // process → controller, asks for a decision at a live site
	TResponse Type = 5 // controller → process, answers a Request
	TEvents   Type = 6 // process → controller, a batch of events
	TBye      Type = 7 // either way, orderly close
)

func (t Type) String() string {
	switch t {
	case THello:
		return "hello"
	case TWelcome:
		return "welcome"
	case TPlan:
		return "plan"
	case TRequest:
		return "request"
	case TResponse:
		return "response"
	case TEvents:
		return "events"
	case TBye:
		return "bye"
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Role says what kind of process is connecting.
type Role uint8

// Roles.
const (
	RoleAgent    Role = 1 // an instrumented node
	RoleWorkload Role = 2 // a workload client process
)

// Plan flags.
const (
	FlagStates   uint32 = 1 << 0 // report abstract-state changes
	FlagStacks   uint32 = 1 << 1 // send the call stack with every request
	FlagTimeouts uint32 = 1 << 2 // report timeout values used at run time
	FlagCoverage uint32 = 1 << 3 // report the first hit of every site
	FlagObserve  uint32 = 1 << 4 // report peer messages at observation points
	FlagPeers    uint32 = 1 << 5 // tag goroutines with the peers they dial (Request.Peer)
	FlagMembers  uint32 = 1 << 6 // tag goroutines with the member whose method they run (Request.Member)
)

// Action is what a Response tells the hook to do.
type Action uint8

// Actions.
const (
	ActNone  Action = 0 // run the real call
	ActError Action = 1 // return error variant Arg (1-based) instead of calling
	ActDelay Action = 2 // sleep Arg nanoseconds, then run the real call
	ActCrash Action = 3 // block: the controller kills the process
	// ActStall: the node is cut off from its peers; block for at most Arg
	// nanoseconds or until the next plan, then ask again (a partition,
	// healed by a new plan).
	ActStall Action = 4
	// ActCorrupt: run the real read, then alter the bytes it read (one
	// bit or one sector), as Arg chooses (agent.CorruptBytes).
	ActCorrupt Action = 5
	// ActTear: write only a prefix of the bytes, cut at a sector
	// boundary as Arg chooses (agent.TornLength), report it (EvDisk) and
	// block: the controller kills the process.
	ActTear Action = 6
	// ActCrashAfter: run the real call, and when it has returned ask
	// again from the same goroutine (Request.After) before the caller
	// goes on: the answer is ActCrash, and the controller kills the
	// process then, right after the call.
	ActCrashAfter Action = 7
	// ActRot: write the bytes whole, but with one bit or one sector of
	// them changed as Arg chooses (agent.CorruptBytes) — the file holds
	// the wrong bytes, every later read sees them —, report it (EvDisk)
	// and block: the controller kills the process, whose restart reads
	// them back.
	ActRot Action = 8
	// ActHold: a delay held until a condition: sleep while the current
	// plan lists the request (Plan.Holding), Arg nanoseconds at most (the
	// cap), then run the real call. The plan the controller sends before
	// this response lists it (so the hook, which checks the plan it has
	// when the response arrives, never misses a wake that came earlier);
	// the first plan without it wakes the call.
	ActHold Action = 9
)

// lastAction is the highest action DecodeResponse accepts.
const lastAction = ActHold

func (a Action) String() string {
	switch a {
	case ActNone:
		return "none"
	case ActError:
		return "error"
	case ActDelay:
		return "delay"
	case ActCrash:
		return "crash"
	case ActStall:
		return "stall"
	case ActCorrupt:
		return "corrupt"
	case ActTear:
		return "tear"
	case ActCrashAfter:
		return "crash-after"
	case ActRot:
		return "rot"
	case ActHold:
		return "hold"
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// EventKind identifies an Event.
type EventKind uint8

// Event kinds and the meaning of their fields.
const (
	// EvState: goroutine D running instance C of task unit A entered state B.
	EvState EventKind = 1
	// EvTimeout: site A used a timeout of B nanoseconds.
	EvTimeout EventKind = 2
	// EvHit: site A was reached for the first time in this process.
	EvHit EventKind = 3
	// EvWorkload: Data holds a JSON-encoded workload record.
	EvWorkload EventKind = 4
	// EvRole: the process's role became the value int64(A); with B > 0,
	// the role of the member of rank B (Request.MemberSeq) only.
	EvRole EventKind = 5
	// EvObserve: at observation point A a message of type int64(B) from
	// C to D was observed; Data holds the values of the point's variables
	// (AppendValues).
	EvObserve EventKind = 6
	// EvCover: the process covered the basic blocks whose catalog
	// indices Data holds (AppendBlocks) since its last EvCover.
	EvCover EventKind = 7
	// EvDisk: the disk fault at site A was carried out on B bytes (the
	// read's or the write's): a corruption changed the byte at offset C
	// (bit b-1 of it when b = D&0xff > 0, the 512-byte sector from C when
	// b is 0) of the site's (D>>8)-th read since the fault was granted (a
	// fault granted at a read of 0 bytes, reported with B = 0, stays
	// armed for the next read that returns bytes); a torn write kept C
	// bytes. Data holds the file's name when known. After a torn write
	// the process waits to be killed.
	EvDisk EventKind = 8
)

// lastEvent is the highest event kind DecodeEvents accepts.
const lastEvent = EvDisk

// AppendBlocks appends the encoding of an EvCover's block indices, which
// must be ascending: each one's difference from the one before (from 0 for
// the first) as an unsigned varint.
func AppendBlocks(buf []byte, blocks []uint32) []byte {
	prev := uint32(0)
	for _, b := range blocks {
		buf = binary.AppendUvarint(buf, uint64(b-prev))
		prev = b
	}
	return buf
}

// DecodeBlocks decodes what AppendBlocks wrote, appending to dst.
func DecodeBlocks(dst []uint32, p []byte) ([]uint32, error) {
	prev := uint64(0)
	for len(p) > 0 {
		v, n := binary.Uvarint(p)
		if n <= 0 || prev+v > 1<<32-1 {
			return dst, ErrMalformed
		}
		prev += v
		dst = append(dst, uint32(prev))
		p = p[n:]
	}
	return dst, nil
}

// AppendValues appends the encoding of an EvObserve's values: signed
// varints, one after another.
func AppendValues(buf []byte, vals []int64) []byte {
	for _, v := range vals {
		buf = binary.AppendVarint(buf, v)
	}
	return buf
}

// DecodeValues decodes what AppendValues wrote.
func DecodeValues(p []byte) ([]int64, error) {
	var out []int64
	for len(p) > 0 {
		v, n := binary.Varint(p)
		if n <= 0 {
			return nil, ErrMalformed
		}
		out = append(out, v)
		p = p[n:]
	}
	return out, nil
}

// Hello opens a connection.
type Hello struct {
	Version     uint32
	Role        Role
	Node        string // node name, from GOFAULT_NODE
	Trial       string // trial key, from GOFAULT_TRIAL
	PID         uint64
	CatalogHash string // hash of the catalog the binary was instrumented with
}

// Plan says which sites are live in the current trial for this process.
// Hooks at sites that are not live never contact the controller.
type Plan struct {
	Epoch uint32   // increases with every plan of a connection
	Flags uint32   // Flag* bits
	Sites []uint32 // live site indices, ascending
	// Holding are the requests of this connection (Request.ID) whose
	// held delay (ActHold) goes on: each sleeps while it is listed.
	Holding []uint64
}

// Welcome answers Hello.
type Welcome struct {
	Version uint32
	Plan    Plan
}

// Frame is one call-stack frame.
type Frame struct {
	Func string // package-qualified function name
	File string
	Line uint32
}

// Request asks for a decision at a live site.
type Request struct {
	ID        uint64
	Site      uint32
	Goroutine uint64 // identity of the calling goroutine
	Task      uint32 // task unit of the goroutine's last state hook, 0 if none
	Inst      uint64 // task instance of that hook
	State     uint32 // abstract state of that hook
	// HasRole says the process has reported its role (agent.Role); Role is
	// then the role's value, a constant of the catalog's role type.
	HasRole bool
	Role    int64
	Stack   []Frame
	// Peer is, at a peer-network site, the address the call talks to:
	// the one a dial goes to, or the one the calling goroutine last
	// dialled; "" when unknown.
	Peer string
	// Member is, when the plan asks (FlagMembers), the per-member value
	// of the in-process cluster member whose method the calling goroutine
	// runs (the innermost on its stack; hashicorp/raft's server ID), ""
	// when none; MemberSeq
	// is its rank among the process's members in the order the agent
	// first saw them, from 1 (0 with no member).
	Member    string
	MemberSeq uint32
	// PeerSeq is, when the plan asks (FlagMembers), the rank of the
	// in-process cluster member whose address is Peer (the member that
	// announced it, agent.MemberEnterAt), 0 when none: a send of an
	// in-process transport to another member.
	PeerSeq uint32
	// Ranked is, when the plan asks (FlagMembers), how many members the
	// process has ranked so far (ranks 1..Ranked exist), so that the
	// controller knows every member a split may divide before each of
	// them made a request.
	Ranked uint32
	// After says the call of Site that got ActCrashAfter has returned:
	// the goroutine waits for the crash before its caller goes on.
	After bool
}

// Response answers a Request.
type Response struct {
	ID     uint64
	Action Action
	Arg    int64 // error variant for ActError, nanoseconds for ActDelay
}

// Event is one entry of an Events batch; the meaning of A–D depends on Kind.
type Event struct {
	Kind       EventKind
	Time       int64 // unix nanoseconds
	A, B, C, D uint64
	Data       []byte
}

// Events is a batch of events.
type Events struct {
	Events []Event
}

// Errors returned by Reader and the decoders.
var (
	ErrFrameSize = errors.New("wire: frame size out of range")
	ErrMalformed = errors.New("wire: malformed payload")
)

// Reader reads frames from a stream.
type Reader struct {
	r   io.Reader
	buf []byte
	// start and end delimit the unread bytes of buf.
	start, end int
}

// NewReader returns a Reader over r with an internal buffer.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, buf: make([]byte, 64<<10)}
}

// Buffered reports how many bytes are read from the stream but not yet
// returned as frames. A server uses it to flush its replies only once it has
// handled every request that arrived together.
func (r *Reader) Buffered() int { return r.end - r.start }

// fill makes at least n unread bytes available.
func (r *Reader) fill(n int) error {
	if r.end-r.start >= n {
		return nil
	}
	if n > len(r.buf) {
		nb := make([]byte, n+4096)
		r.end = copy(nb, r.buf[r.start:r.end])
		r.start = 0
		r.buf = nb
	} else if r.start+n > len(r.buf) {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	for r.end-r.start < n {
		m, err := r.r.Read(r.buf[r.end:])
		r.end += m
		if err != nil {
			if r.end-r.start >= n {
				return nil
			}
			if err == io.EOF && r.end-r.start > 0 {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// ReadFrame returns the next frame's type and payload. The payload is valid
// only until the next call. A frame whose length is 0 or above MaxFrame is
// rejected with ErrFrameSize before any of it is buffered.
func (r *Reader) ReadFrame() (Type, []byte, error) {
	if err := r.fill(4); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(r.buf[r.start:])
	if n == 0 || n > MaxFrame {
		return 0, nil, fmt.Errorf("%w: %d bytes", ErrFrameSize, n)
	}
	if err := r.fill(4 + int(n)); err != nil {
		return 0, nil, err
	}
	f := r.buf[r.start+4 : r.start+4+int(n)]
	r.start += 4 + int(n)
	return Type(f[0]), f[1:], nil
}

// BeginFrame appends a frame header for type t to buf. The caller appends the
// payload and then calls EndFrame with the returned offset.
func BeginFrame(buf []byte, t Type) ([]byte, int) {
	off := len(buf)
	return append(buf, 0, 0, 0, 0, byte(t)), off
}

// EndFrame patches the length of the frame started at off.
func EndFrame(buf []byte, off int) []byte {
	binary.BigEndian.PutUint32(buf[off:], uint32(len(buf)-off-4))
	return buf
}

// AppendHello appends a Hello frame.
func AppendHello(buf []byte, m *Hello) []byte {
	buf, off := BeginFrame(buf, THello)
	buf = binary.AppendUvarint(buf, uint64(m.Version))
	buf = append(buf, byte(m.Role))
	buf = appendString(buf, m.Node)
	buf = appendString(buf, m.Trial)
	buf = binary.AppendUvarint(buf, m.PID)
	buf = appendString(buf, m.CatalogHash)
	return EndFrame(buf, off)
}

// DecodeHello decodes a Hello payload.
func DecodeHello(p []byte, m *Hello) error {
	d := decoder{p: p}
	m.Version = d.u32()
	m.Role = Role(d.byte())
	m.Node = d.string()
	m.Trial = d.string()
	m.PID = d.uvarint()
	m.CatalogHash = d.string()
	return d.done()
}

func appendPlan(buf []byte, m *Plan) []byte {
	buf = binary.AppendUvarint(buf, uint64(m.Epoch))
	buf = binary.AppendUvarint(buf, uint64(m.Flags))
	buf = binary.AppendUvarint(buf, uint64(len(m.Sites)))
	prev := uint32(0)
	for _, s := range m.Sites {
		buf = binary.AppendUvarint(buf, uint64(s-prev)) // ascending: small deltas
		prev = s
	}
	if len(m.Holding) == 0 {
		return buf // as before version 12
	}
	buf = binary.AppendUvarint(buf, uint64(len(m.Holding)))
	for _, id := range m.Holding {
		buf = binary.AppendUvarint(buf, id)
	}
	return buf
}

func (d *decoder) plan(m *Plan) {
	m.Epoch = d.u32()
	m.Flags = d.u32()
	n := d.count(1)
	m.Sites = m.Sites[:0]
	prev := uint64(0)
	for i := 0; i < n && d.err == nil; i++ {
		prev += d.uvarint()
		if prev > 1<<32-1 {
			d.fail()
			break
		}
		m.Sites = append(m.Sites, uint32(prev))
	}
	m.Holding = m.Holding[:0]
	if len(d.p) == 0 {
		return // no held delay: the plan ends with its sites, as before version 12
	}
	n = d.count(1)
	for i := 0; i < n && d.err == nil; i++ {
		m.Holding = append(m.Holding, d.uvarint())
	}
}

// AppendPlan appends a Plan frame. Sites must be ascending.
func AppendPlan(buf []byte, m *Plan) []byte {
	buf, off := BeginFrame(buf, TPlan)
	buf = appendPlan(buf, m)
	return EndFrame(buf, off)
}

// DecodePlan decodes a Plan payload.
func DecodePlan(p []byte, m *Plan) error {
	d := decoder{p: p}
	d.plan(m)
	return d.done()
}

// AppendWelcome appends a Welcome frame.
func AppendWelcome(buf []byte, m *Welcome) []byte {
	buf, off := BeginFrame(buf, TWelcome)
	buf = binary.AppendUvarint(buf, uint64(m.Version))
	buf = appendPlan(buf, &m.Plan)
	return EndFrame(buf, off)
}

// DecodeWelcome decodes a Welcome payload.
func DecodeWelcome(p []byte, m *Welcome) error {
	d := decoder{p: p}
	m.Version = d.u32()
	d.plan(&m.Plan)
	return d.done()
}

// AppendRequest appends a Request frame.
func AppendRequest(buf []byte, m *Request) []byte {
	buf, off := BeginFrame(buf, TRequest)
	buf = binary.AppendUvarint(buf, m.ID)
	buf = binary.AppendUvarint(buf, uint64(m.Site))
	buf = binary.AppendUvarint(buf, m.Goroutine)
	buf = binary.AppendUvarint(buf, uint64(m.Task))
	buf = binary.AppendUvarint(buf, m.Inst)
	buf = binary.AppendUvarint(buf, uint64(m.State))
	// One byte of flags: bit 0 a role follows, bit 1 After.
	var flags byte
	if m.HasRole {
		flags |= 1
	}
	if m.After {
		flags |= 2
	}
	buf = append(buf, flags)
	if m.HasRole {
		buf = binary.AppendVarint(buf, m.Role)
	}
	buf = binary.AppendUvarint(buf, uint64(len(m.Stack)))
	for i := range m.Stack {
		f := &m.Stack[i]
		buf = appendString(buf, f.Func)
		buf = appendString(buf, f.File)
		buf = binary.AppendUvarint(buf, uint64(f.Line))
	}
	buf = appendString(buf, m.Peer)
	buf = appendString(buf, m.Member)
	buf = binary.AppendUvarint(buf, uint64(m.MemberSeq))
	buf = binary.AppendUvarint(buf, uint64(m.PeerSeq))
	buf = binary.AppendUvarint(buf, uint64(m.Ranked))
	return EndFrame(buf, off)
}

// DecodeRequest decodes a Request payload.
func DecodeRequest(p []byte, m *Request) error {
	d := decoder{p: p}
	m.ID = d.uvarint()
	m.Site = d.u32()
	m.Goroutine = d.uvarint()
	m.Task = d.u32()
	m.Inst = d.uvarint()
	m.State = d.u32()
	m.HasRole, m.Role = false, 0
	flags := d.byte()
	if flags&^3 != 0 {
		d.fail()
	}
	m.After = flags&2 != 0
	if flags&1 != 0 {
		m.HasRole, m.Role = true, d.varint()
	}
	n := d.count(3)
	m.Stack = m.Stack[:0]
	for i := 0; i < n && d.err == nil; i++ {
		m.Stack = append(m.Stack, Frame{Func: d.string(), File: d.string(), Line: d.u32()})
	}
	m.Peer = d.string()
	m.Member = d.string()
	m.MemberSeq = d.u32()
	m.PeerSeq = d.u32()
	m.Ranked = d.u32()
	return d.done()
}

// AppendResponse appends a Response frame.
func AppendResponse(buf []byte, m *Response) []byte {
	buf, off := BeginFrame(buf, TResponse)
	buf = binary.AppendUvarint(buf, m.ID)
	buf = append(buf, byte(m.Action))
	buf = binary.AppendVarint(buf, m.Arg)
	return EndFrame(buf, off)
}

// DecodeResponse decodes a Response payload.
func DecodeResponse(p []byte, m *Response) error {
	d := decoder{p: p}
	m.ID = d.uvarint()
	m.Action = Action(d.byte())
	m.Arg = d.varint()
	if m.Action > lastAction {
		d.fail()
	}
	return d.done()
}

// AppendEvent appends one event to the payload of an Events frame under
// construction (see BeginFrame). Callers that batch events write the count
// themselves; AppendEvents is the simple form.
func AppendEvent(buf []byte, e *Event) []byte {
	buf = append(buf, byte(e.Kind))
	buf = binary.AppendVarint(buf, e.Time)
	buf = binary.AppendUvarint(buf, e.A)
	buf = binary.AppendUvarint(buf, e.B)
	buf = binary.AppendUvarint(buf, e.C)
	buf = binary.AppendUvarint(buf, e.D)
	return appendBytes(buf, e.Data)
}

// EventSize returns the encoded length of the event at the start of p, or
// -1 if p does not start with a complete event.
func EventSize(p []byte) int {
	d := decoder{p: p}
	d.byte()
	d.varint()
	d.uvarint()
	d.uvarint()
	d.uvarint()
	d.uvarint()
	d.bytes()
	if d.err != nil {
		return -1
	}
	return len(p) - len(d.p)
}

// AppendEvents appends an Events frame.
func AppendEvents(buf []byte, m *Events) []byte {
	buf, off := BeginFrame(buf, TEvents)
	for i := range m.Events {
		buf = AppendEvent(buf, &m.Events[i])
	}
	return EndFrame(buf, off)
}

// DecodeEvents decodes an Events payload: a sequence of events up to the end
// of the frame. Data slices alias p.
func DecodeEvents(p []byte, m *Events) error {
	d := decoder{p: p}
	m.Events = m.Events[:0]
	for len(d.p) > 0 && d.err == nil {
		var e Event
		e.Kind = EventKind(d.byte())
		if e.Kind < EvState || e.Kind > lastEvent {
			d.fail()
			break
		}
		e.Time = d.varint()
		e.A, e.B, e.C, e.D = d.uvarint(), d.uvarint(), d.uvarint(), d.uvarint()
		e.Data = d.bytes()
		m.Events = append(m.Events, e)
	}
	return d.done()
}

// AppendBye appends a Bye frame.
func AppendBye(buf []byte) []byte {
	buf, off := BeginFrame(buf, TBye)
	return EndFrame(buf, off)
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func appendBytes(buf []byte, b []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(b)))
	return append(buf, b...)
}

// decoder reads payload fields; the first error sticks and later reads
// return zero values.
type decoder struct {
	p   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = ErrMalformed
	}
	d.p = nil
}

func (d *decoder) done() error {
	if d.err == nil && len(d.p) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(d.p))
	}
	return d.err
}

func (d *decoder) byte() byte {
	if len(d.p) < 1 {
		d.fail()
		return 0
	}
	b := d.p[0]
	d.p = d.p[1:]
	return b
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.p)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) u32() uint32 {
	v := d.uvarint()
	if v > 1<<32-1 {
		d.fail()
		return 0
	}
	return uint32(v)
}

// count reads a element count and checks it against the bytes left, given
// that each element takes at least min bytes, so a forged count cannot make
// the decoder allocate more than the frame could hold.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.p)/min) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.p)) {
		d.fail()
		return nil
	}
	b := d.p[:n:n]
	d.p = d.p[n:]
	return b
}

func (d *decoder) string() string { return string(d.bytes()) }
