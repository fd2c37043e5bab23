package repro

import (
	"io"

	"github.com/nats-io/nats-server/v2/server"
)

// GateReader reads from R, stopping once N bytes were read until Open is
// closed: a slow source of an ObjectStore.Put (a file on a slow disk, a
// network upload), so that a test can act between the chunks Put has
// published and the rest (docs/found.md N7). At is closed when the
// reader reaches the gate.
type GateReader struct {
	R    io.Reader
	N    int
	At   chan struct{}
	Open chan struct{}
	read int
}

// NewGateReader is a GateReader of r with its gate after n bytes.
func NewGateReader(r io.Reader, n int) *GateReader {
	return &GateReader{R: r, N: n, At: make(chan struct{}), Open: make(chan struct{})}
}

// Read reads from R, up to the gate, waiting there until Open is closed.
func (g *GateReader) Read(p []byte) (int, error) {
	if g.read == g.N {
		close(g.At)
		<-g.Open
	}
	if g.read < g.N {
		p = p[:min(len(p), g.N-g.read)]
	}
	k, err := g.R.Read(p)
	g.read += k
	return k, err
}

// LastSeq is the last sequence of server i's own replica of stream (from
// its /jsz), 0 while it is stopped or holds no such stream.
func (c *Cluster) LastSeq(i int, stream string) uint64 {
	s := c.Server(i)
	if s == nil {
		return 0
	}
	d, err := s.JszAccount(&server.JSzOptions{Account: "$G", Streams: true})
	if err != nil {
		return 0
	}
	for _, sd := range d.Streams {
		if sd.Name == stream {
			return sd.State.LastSeq
		}
	}
	return 0
}
