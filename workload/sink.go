package workload

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/record"
)

// Tuning of event reporting.
const (
	// FlushInterval is how often pending events are sent.
	FlushInterval = 20 * time.Millisecond
	// MaxPending bounds the events held while the controller is slow;
	// events past it are dropped (and counted) rather than blocking the
	// workload.
	MaxPending = 1 << 16
	// maxMsg bounds the length of an event's message.
	maxMsg = 2048
	// closeTimeout bounds the final flush and Bye.
	closeTimeout = 5 * time.Second
	// handshakeTimeout bounds dialing the controller and its Welcome.
	handshakeTimeout = 5 * time.Second
)

// writer delivers a batch of events somewhere.
type writer interface {
	write(evs []record.ClientEvent) error
	// close ends the stream (Bye for the controller) within deadline.
	close(deadline time.Time) error
}

// sink batches events and hands them to a writer from its own goroutine,
// so emitting never blocks on the destination.
type sink struct {
	mu      sync.Mutex
	pending []record.ClientEvent
	dropped int
	closed  bool

	w       writer
	stop    chan struct{}
	stopped chan struct{}
}

func newSink(w writer) *sink {
	s := &sink{w: w, stop: make(chan struct{}), stopped: make(chan struct{})}
	go s.loop()
	return s
}

// emit queues one event; it never blocks on I/O.
func (s *sink) emit(ev record.ClientEvent) {
	if len(ev.Msg) > maxMsg {
		ev.Msg = ev.Msg[:maxMsg] + "…"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if len(s.pending) >= MaxPending {
		s.dropped++
		return
	}
	s.pending = append(s.pending, ev)
}

func (s *sink) take() ([]record.ClientEvent, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	evs, d := s.pending, s.dropped
	s.pending, s.dropped = nil, 0
	return evs, d
}

func (s *sink) loop() {
	defer close(s.stopped)
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	broken := false
	for {
		var final bool
		select {
		case <-t.C:
		case <-s.stop:
			final = true
		}
		evs, dropped := s.take()
		if dropped > 0 {
			slog.Warn("workload: events dropped, the controller is too slow", "dropped", dropped)
		}
		if len(evs) > 0 && !broken {
			if err := s.w.write(evs); err != nil {
				slog.Error("workload: reporting events failed; later events are discarded", "err", err)
				broken = true
			}
		}
		if final {
			return
		}
	}
}

// close flushes what is pending and ends the stream.
func (s *sink) close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	<-s.stopped
	return s.w.close(time.Now().Add(closeTimeout))
}

// jsonWriter writes events as JSON lines, e.g. to stdout.
type jsonWriter struct {
	w   *bufio.Writer
	enc *json.Encoder
}

func newJSONWriter(w io.Writer) *jsonWriter {
	bw := bufio.NewWriter(w)
	return &jsonWriter{w: bw, enc: json.NewEncoder(bw)}
}

func (j *jsonWriter) write(evs []record.ClientEvent) error {
	for i := range evs {
		if err := j.enc.Encode(&evs[i]); err != nil {
			return fmt.Errorf("encode event: %w", err)
		}
	}
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("write events: %w", err)
	}
	return nil
}

func (j *jsonWriter) close(time.Time) error { return j.w.Flush() }

// wireWriter sends events to the controller over the wire protocol.
type wireWriter struct {
	c   net.Conn
	buf []byte
}

// dialController connects to addr ("unix:/path" or "tcp:host:port"), says
// Hello as the workload of trial and waits for the Welcome.
func dialController(addr, trial string) (*wireWriter, error) {
	network, address, ok := strings.Cut(addr, ":")
	if !ok || (network != "unix" && network != "tcp") || address == "" {
		return nil, fmt.Errorf("controller address %q: want unix:/path or tcp:host:port", addr)
	}
	c, err := net.DialTimeout(network, address, handshakeTimeout)
	if err != nil {
		return nil, fmt.Errorf("dial controller: %w", err)
	}
	if err := handshake(c, trial); err != nil {
		c.Close()
		return nil, err
	}
	ww := &wireWriter{c: c}
	go ww.drain()
	return ww, nil
}

func handshake(c net.Conn, trial string) error {
	if err := c.SetDeadline(time.Now().Add(handshakeTimeout)); err != nil {
		return fmt.Errorf("controller handshake: %w", err)
	}
	hello := wire.AppendHello(nil, &wire.Hello{
		Version: wire.Version,
		Role:    wire.RoleWorkload,
		Node:    ClientWorkload,
		Trial:   trial,
		PID:     uint64(os.Getpid()),
	})
	if _, err := c.Write(hello); err != nil {
		return fmt.Errorf("controller hello: %w", err)
	}
	r := wire.NewReader(c)
	typ, p, err := r.ReadFrame()
	if err != nil {
		return fmt.Errorf("controller welcome: %w", err)
	}
	if typ != wire.TWelcome {
		return fmt.Errorf("controller answered hello with %v, want welcome", typ)
	}
	var w wire.Welcome
	if err := wire.DecodeWelcome(p, &w); err != nil {
		return fmt.Errorf("controller welcome: %w", err)
	}
	return c.SetDeadline(time.Time{})
}

// drain reads and ignores whatever the controller pushes (plans, bye) so it
// never blocks on a full socket; it ends when the connection closes.
func (w *wireWriter) drain() {
	r := wire.NewReader(w.c)
	for {
		if _, _, err := r.ReadFrame(); err != nil {
			return
		}
	}
}

func (w *wireWriter) write(evs []record.ClientEvent) error {
	buf := w.buf[:0]
	buf, off := wire.BeginFrame(buf, wire.TEvents)
	for i := range evs {
		data, err := json.Marshal(&evs[i])
		if err != nil {
			return fmt.Errorf("encode event: %w", err)
		}
		e := wire.Event{Kind: wire.EvWorkload, Time: evs[i].Time.UnixNano(), Data: data}
		start := len(buf)
		buf = wire.AppendEvent(buf, &e)
		if len(buf)-off-4 > wire.MaxFrame && start > off+5 {
			// Close the frame before this event and start another.
			tail := append([]byte(nil), buf[start:]...)
			buf = wire.EndFrame(buf[:start], off)
			buf, off = wire.BeginFrame(buf, wire.TEvents)
			buf = append(buf, tail...)
		}
	}
	buf = wire.EndFrame(buf, off)
	w.buf = buf
	if err := w.c.SetWriteDeadline(time.Now().Add(closeTimeout)); err != nil {
		return fmt.Errorf("send events: %w", err)
	}
	if _, err := w.c.Write(buf); err != nil {
		return fmt.Errorf("send events: %w", err)
	}
	return nil
}

func (w *wireWriter) close(deadline time.Time) error {
	defer w.c.Close()
	if err := w.c.SetWriteDeadline(deadline); err != nil {
		return fmt.Errorf("close controller connection: %w", err)
	}
	if _, err := w.c.Write(wire.AppendBye(nil)); err != nil {
		return fmt.Errorf("send bye: %w", err)
	}
	return nil
}

// DecodeEvent returns the client event carried by a wire event of kind
// wire.EvWorkload; the controller calls it for the Events of a workload
// connection.
func DecodeEvent(e *wire.Event) (record.ClientEvent, error) {
	var ev record.ClientEvent
	if e.Kind != wire.EvWorkload {
		return ev, fmt.Errorf("event kind %d is not a workload event", e.Kind)
	}
	if err := json.Unmarshal(e.Data, &ev); err != nil {
		return ev, fmt.Errorf("decode workload event: %w", err)
	}
	return ev, nil
}
