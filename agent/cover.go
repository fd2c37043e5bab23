package agent

import (
	"encoding/binary"
	"strconv"
	"sync"
	"time"

	"github.com/gofault/gofault/agent/wire"
)

// Coverage of gofault's own (Go's -cover ignores build overlays). The
// instrumenter numbers the basic blocks of the target packages and puts
//
//	if gofaultagent.Cov[N] == 0 { gofaultagent.Cov[N] = 1 }
//
// at the start of block N: a load from a fixed address, a predictable
// branch and a store the first time only (so that cores running the same
// blocks do not make their cache lines bounce); no lock, no allocation,
// no call. The connection's flusher scans the table every
// flushInterval and sends the blocks set since its last scan as an
// EvCover event, so a node killed by a crash fault has reported all but
// its last few milliseconds of coverage; a hook told to crash sends what
// it has before it waits for the kill.
//
// The table is read while generated code writes it, without
// synchronisation, as `go tool cover -mode=set` does: a byte store is
// atomic on every platform Go supports, and a block seen late is reported
// by the next scan. A build with -race would report these accesses, so
// the instrumenter leaves the counters out of -race builds.

// MaxBlocks is the number of blocks Cov can count; the instrumenter numbers
// no more.
const MaxBlocks = 1 << 20

// Cov is the coverage table: generated code sets Cov[N] to 1 at the start
// of basic block N (if it is 0). Its pages are only mapped where blocks are counted.
var Cov [MaxBlocks]byte

// coverBlocks is the number of blocks the build counts, linked with
// -ldflags=-X=github.com/gofault/gofault/agent.coverBlocks=N; the flusher
// scans Cov[:N].
var coverBlocks string

// maxBlocksPerEvent bounds one EvCover event (3 bytes per block at most),
// well below wire.MaxFrame.
const maxBlocksPerEvent = 1 << 16

// covered is what the flusher has reported of Cov.
var covered struct {
	mu   sync.Mutex
	n    int    // blocks scanned: coverBlocks, bounded by MaxBlocks
	seen []byte // per block, 1 once reported; len n
	buf  []uint32
}

func init() { setCoverBlocks(coverBlocks) }

// setCoverBlocks sets the number of blocks to scan from its -X form.
func setCoverBlocks(s string) {
	n, _ := strconv.Atoi(s)
	covered.mu.Lock()
	covered.n = max(0, min(n, MaxBlocks))
	covered.seen = make([]byte, covered.n)
	covered.mu.Unlock()
}

// resetCovered forgets what was reported, for a new connection (whose
// controller has seen nothing).
func resetCovered() {
	covered.mu.Lock()
	clear(covered.seen)
	covered.mu.Unlock()
}

// appendCovered appends EvCover events for the blocks set in Cov since
// the last call to buf (none if there are none) and marks them reported.
// It compares eight blocks at a time, so a scan of etcd's ≈ 40k blocks
// costs a few microseconds.
func appendCovered(buf []byte, now time.Time) []byte {
	covered.mu.Lock()
	defer covered.mu.Unlock()
	n, seen := covered.n, covered.seen
	blocks := covered.buf[:0]
	i := 0
	for ; i+8 <= n; i += 8 {
		if binary.LittleEndian.Uint64(Cov[i:]) == binary.LittleEndian.Uint64(seen[i:]) {
			continue
		}
		for j := i; j < i+8; j++ {
			if Cov[j] != 0 && seen[j] == 0 {
				seen[j] = 1
				blocks = append(blocks, uint32(j))
			}
		}
	}
	for ; i < n; i++ {
		if Cov[i] != 0 && seen[i] == 0 {
			seen[i] = 1
			blocks = append(blocks, uint32(i))
		}
	}
	covered.buf = blocks
	for len(blocks) > 0 {
		k := min(len(blocks), maxBlocksPerEvent)
		buf = wire.AppendEvent(buf, &wire.Event{Kind: wire.EvCover, Time: now.UnixNano(), Data: wire.AppendBlocks(nil, blocks[:k])})
		blocks = blocks[k:]
	}
	return buf
}
