package agent

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gofault/gofault/agent/wire"
)

// Event batching bounds.
const (
	flushInterval  = 10 * time.Millisecond
	maxEventBuffer = 1 << 20 // events beyond this are dropped, never blocking a hook
)

// conn is the agent's one connection to the controller. Frames are written
// by whichever goroutine finds the connection idle; goroutines that arrive
// while a write is in progress append their frame and leave, and the writer
// sends everything appended before it returns (write combining). One reader
// goroutine handles plans and responses.
type conn struct {
	nc net.Conn
	r  *wire.Reader

	wmu      sync.Mutex
	wbuf     []byte
	spare    []byte
	flushing bool

	pmu     sync.Mutex
	pending map[uint64]waiter
	nextID  uint64
	closed  bool

	emu     sync.Mutex
	ebuf    []byte // encoded events not yet sent
	dropped uint64

	done chan struct{} // closed by close
}

// dialAddr parses a GOFAULT_CONTROLLER value.
func dialAddr(addr string) (network, address string) {
	switch {
	case strings.HasPrefix(addr, "unix:"):
		return "unix", strings.TrimPrefix(addr, "unix:")
	case strings.HasPrefix(addr, "tcp:"):
		return "tcp", strings.TrimPrefix(addr, "tcp:")
	}
	return "tcp", addr
}

// connect dials the controller and completes the handshake within timeout.
func connect(addr string, hello wire.Hello, timeout time.Duration) (*conn, error) {
	network, address := dialAddr(addr)
	deadline := time.Now().Add(timeout)
	nc, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	c, err := handshake(nc, hello, deadline)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func handshake(nc net.Conn, hello wire.Hello, deadline time.Time) (*conn, error) {
	if err := nc.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if _, err := nc.Write(wire.AppendHello(nil, &hello)); err != nil {
		return nil, fmt.Errorf("send hello: %w", err)
	}
	r := wire.NewReader(nc)
	t, p, err := r.ReadFrame()
	if err != nil {
		return nil, fmt.Errorf("read welcome: %w", err)
	}
	if t != wire.TWelcome {
		return nil, fmt.Errorf("controller sent %v, want welcome", t)
	}
	var w wire.Welcome
	if err := wire.DecodeWelcome(p, &w); err != nil {
		return nil, fmt.Errorf("decode welcome: %w", err)
	}
	if w.Version != wire.Version {
		return nil, fmt.Errorf("controller speaks protocol %d, agent %d", w.Version, wire.Version)
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	setPlan(newPlan(&w.Plan))
	return &conn{
		nc:      nc,
		r:       r,
		pending: make(map[uint64]waiter),
		done:    make(chan struct{}),
	}, nil
}

// start publishes the connection and starts its reader and event flusher.
func (c *conn) start() {
	client.Store(c)
	go c.readLoop()
	go c.flushLoop()
}

func (c *conn) readLoop() {
	var (
		resp wire.Response
		pl   wire.Plan
	)
	for {
		t, p, err := c.r.ReadFrame()
		if err != nil {
			c.close()
			return
		}
		switch t {
		case wire.TResponse:
			if wire.DecodeResponse(p, &resp) != nil {
				c.close()
				return
			}
			c.pmu.Lock()
			w, ok := c.pending[resp.ID]
			delete(c.pending, resp.ID)
			c.pmu.Unlock()
			if ok {
				w.ch <- resp // buffered, never blocks
			}
		case wire.TPlan:
			if wire.DecodePlan(p, &pl) != nil {
				c.close()
				return
			}
			setPlan(newPlan(&pl))
		case wire.TBye:
			c.close()
			return
		default:
			// Unknown frames from a newer controller are skipped.
		}
	}
}

var respChans = sync.Pool{New: func() any { return make(chan wire.Response, 1) }}

// waiter is a hook waiting for its response.
type waiter struct {
	ch   chan wire.Response
	sent time.Time
}

// roundTrip sends req and waits for its response. It reports false if the
// connection is closed or the controller does not answer in time, in which
// case the connection is closed for good.
func (c *conn) roundTrip(req *wire.Request) (wire.Response, bool) {
	ch := respChans.Get().(chan wire.Response)
	c.pmu.Lock()
	if c.closed {
		c.pmu.Unlock()
		respChans.Put(ch)
		return wire.Response{}, false
	}
	c.nextID++
	req.ID = c.nextID
	c.pending[req.ID] = waiter{ch: ch, sent: time.Now()}
	c.pmu.Unlock()

	c.wmu.Lock()
	c.wbuf = wire.AppendRequest(c.wbuf, req)
	if err := c.flushLocked(); err != nil {
		c.close()
		return wire.Response{}, false
	}
	// No timer per request: flushLoop closes the connection when a
	// request waits longer than DecisionTimeout, which ends this wait.
	select {
	case resp := <-ch:
		respChans.Put(ch)
		return resp, true
	case <-c.done:
		return wire.Response{}, false
	}
}

// overdue reports whether a request has waited longer than DecisionTimeout.
func (c *conn) overdue(now time.Time) bool {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	for _, w := range c.pending {
		if now.Sub(w.sent) > DecisionTimeout {
			return true
		}
	}
	return false
}

// flushLocked writes wbuf. It is called with wmu held and releases it. If
// another goroutine is already writing, the frames in wbuf are left for it.
func (c *conn) flushLocked() error {
	if c.flushing {
		c.wmu.Unlock()
		return nil
	}
	c.flushing = true
	var err error
	for len(c.wbuf) > 0 && err == nil {
		buf := c.wbuf
		c.wbuf = c.spare[:0]
		c.wmu.Unlock()
		_, err = c.nc.Write(buf)
		c.wmu.Lock()
		c.spare = buf[:0]
	}
	if err != nil {
		c.wbuf = c.wbuf[:0]
	}
	c.flushing = false
	c.wmu.Unlock()
	return err
}

// event queues an event for the next batch. It never blocks on the network.
func (c *conn) event(e wire.Event) {
	c.emu.Lock()
	if len(c.ebuf) < maxEventBuffer {
		c.ebuf = wire.AppendEvent(c.ebuf, &e)
	} else {
		c.dropped++
	}
	c.emu.Unlock()
}

// flushLoop sends queued events every flushInterval, and closes the
// connection when the controller leaves a decision unanswered for longer
// than DecisionTimeout.
func (c *conn) flushLoop() {
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	var spare []byte
	for {
		var now time.Time
		select {
		case <-c.done:
			return
		case now = <-t.C:
			if c.overdue(now) {
				c.close()
				return
			}
		}
		var err error
		if spare, err = c.sendEvents(spare, now); err != nil {
			c.close()
			return
		}
	}
}

// sendEvents sends the queued events and the blocks covered since the last
// call (appendCovered), in frames below wire.MaxFrame. It returns the
// event buffer for reuse as the next call's spare.
func (c *conn) sendEvents(spare []byte, now time.Time) ([]byte, error) {
	c.emu.Lock()
	full := c.ebuf
	c.ebuf = spare[:0]
	c.emu.Unlock()
	full = appendCovered(full, now)
	for batch := full; len(batch) > 0; {
		// Split at event boundaries into frames below wire.MaxFrame.
		n := len(batch)
		if n >= wire.MaxFrame {
			n = eventsPrefix(batch, wire.MaxFrame-1)
		}
		c.wmu.Lock()
		var off int
		c.wbuf, off = wire.BeginFrame(c.wbuf, wire.TEvents)
		c.wbuf = append(c.wbuf, batch[:n]...)
		c.wbuf = wire.EndFrame(c.wbuf, off)
		if err := c.flushLocked(); err != nil {
			return full, err
		}
		batch = batch[n:]
	}
	return full, nil
}

// eventsPrefix returns the length of the longest prefix of encoded events in
// buf that is at most max bytes long.
func eventsPrefix(buf []byte, max int) int {
	n := 0
	for n < len(buf) {
		size := wire.EventSize(buf[n:])
		if size <= 0 || n+size > max {
			break
		}
		n += size
	}
	return n
}

// awaitKill blocks a hook that was told to crash until the controller kills
// the process. If the controller goes away first, the hook returns (fail
// open); if it does not kill the process within CrashWait, the process kills
// itself, as the decision to crash was already recorded.
func (c *conn) awaitKill() {
	// The kill loses what the flusher has not sent yet: send it now.
	if _, err := c.sendEvents(nil, time.Now()); err != nil {
		c.close()
	}
	t := time.NewTimer(CrashWait)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Kill()
		}
		select {} // the kill is asynchronous; never return into the program
	}
}

// close closes the connection for good and makes every hook a no-op.
func (c *conn) close() {
	c.pmu.Lock()
	if c.closed {
		c.pmu.Unlock()
		return
	}
	c.closed = true
	c.pending = nil
	c.pmu.Unlock()
	setPlan(emptyPlan)
	client.CompareAndSwap(c, nil)
	close(c.done)
	c.nc.Close()
}
