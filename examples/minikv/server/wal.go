package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Entry is one replicated log entry.
type Entry struct {
	Index uint64 `json:"i"`
	// ID identifies the client request, so a retried request is applied
	// once.
	ID     string `json:"id"`
	Op     string `json:"op"` // "put", "delete" or "cas"
	Key    string `json:"k"`
	Value  string `json:"v,omitempty"`
	Expect string `json:"e,omitempty"`
	// Sum is, in the log on disk, the CRC-32 of the entry's JSON with Sum
	// zero (sealed): a restart checks every entry it replays against it
	// (unsealed). 0: none (an entry in memory or on the wire).
	Sum uint32 `json:"s,omitempty"`
}

// sealed returns e's JSON line for the log, with its checksum (Sum).
func sealed(e Entry) ([]byte, error) {
	e.Sum = 0
	j, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	e.Sum = crc32.ChecksumIEEE(j)
	return json.Marshal(e)
}

// errAtRest is an entry replayed from the log whose bytes are not those
// written: they changed on the disk.
var errAtRest = errors.New("wal entry checksum mismatch: its bytes on disk are not those written")

// unsealed checks an entry replayed from the log against its checksum and
// returns it without it.
func unsealed(e Entry) (Entry, error) {
	sum := e.Sum
	e.Sum = 0
	if sum == 0 {
		return e, nil // written before entries carried one
	}
	j, err := json.Marshal(e)
	if err != nil {
		return e, err
	}
	if crc32.ChecksumIEEE(j) != sum {
		return e, fmt.Errorf("entry %d: %w", e.Index, errAtRest)
	}
	return e, nil
}

// wal is the write-ahead log: a sequence of segment files wal-<n>.log of
// JSON lines, each segment starting with a header line.
type wal struct {
	dir  string
	f    *os.File
	seq  int   // number of the open segment
	size int64 // bytes written to the open segment
	// lazy: appends are not synced (BugLazySync).
	lazy bool

	// mu guards index: where each record appended by this process lies,
	// for the leader's log reads (Config.LogReads).
	mu    sync.Mutex
	index []record
}

// record locates one appended record of entries first..last in the log:
// segment seq, at off, n bytes, with the CRC-32 of its bytes.
type record struct {
	first, last uint64
	seq         int
	off         int64
	n           int
	crc         uint32
}

type segmentHeader struct {
	Segment int `json:"segment"`
}

// writeRecord appends b and syncs it: the one write path of both the log and
// the snapshot files.
func writeRecord(f *os.File, b []byte) error {
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", f.Name(), err)
	}
	return nil
}

// writeUnsynced appends b without syncing it (BugLazySync).
func writeUnsynced(f *os.File, b []byte) error {
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	return nil
}

func segmentName(dir string, seq int) string {
	return filepath.Join(dir, fmt.Sprintf("wal-%06d.log", seq))
}

// createSegment creates segment seq and writes its header.
func createSegment(dir string, seq int) (*os.File, int64, error) {
	f, err := os.OpenFile(segmentName(dir, seq), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, 0, fmt.Errorf("create wal segment: %w", err)
	}
	h, _ := json.Marshal(segmentHeader{Segment: seq})
	h = append(h, '\n')
	if err := writeRecord(f, h); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, err
	}
	return f, int64(len(h)), nil
}

// append writes entries as one record. On failure the segment is cut back to
// its previous length, so a torn record never precedes later ones.
func (w *wal) append(entries []Entry) error {
	var b []byte
	for _, e := range entries {
		j, err := sealed(e)
		if err != nil {
			return fmt.Errorf("encode entry %d: %w", e.Index, err)
		}
		b = append(append(b, j...), '\n')
	}
	write := writeRecord
	if w.lazy {
		write = writeUnsynced
	}
	if err := write(w.f, b); err != nil {
		if terr := w.f.Truncate(w.size); terr != nil {
			return fmt.Errorf("%w (and truncate: %v)", err, terr)
		}
		return err
	}
	if len(entries) > 0 {
		w.mu.Lock()
		w.index = append(w.index, record{first: entries[0].Index, last: entries[len(entries)-1].Index,
			seq: w.seq, off: w.size, n: len(b), crc: crc32.ChecksumIEEE(b)})
		w.mu.Unlock()
	}
	w.size += int64(len(b))
	return nil
}

// errChecksum is a record read back whose bytes do not match its CRC-32.
var errChecksum = errors.New("wal record checksum mismatch")

// readEntries reads entries from..to back from the log, checking each
// record against its CRC-32 unless trust is set (BugUnchecked). It
// returns nil when records this process appended do not hold them all
// (the entries recovered at start-up).
func (w *wal) readEntries(from, to uint64, trust bool) ([]Entry, error) {
	w.mu.Lock()
	i := sort.Search(len(w.index), func(i int) bool { return w.index[i].last >= from })
	var recs []record
	for ; i < len(w.index) && w.index[i].first <= to; i++ {
		recs = append(recs, w.index[i])
	}
	w.mu.Unlock()
	if len(recs) == 0 || recs[0].first > from {
		return nil, nil
	}
	var out []Entry
	for _, r := range recs {
		f, err := os.Open(segmentName(w.dir, r.seq))
		if err != nil {
			return nil, fmt.Errorf("open wal segment: %w", err)
		}
		buf := make([]byte, r.n)
		_, err = f.ReadAt(buf, r.off)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read wal segment %d: %w", r.seq, err)
		}
		if !trust && crc32.ChecksumIEEE(buf) != r.crc {
			return nil, fmt.Errorf("segment %d at %d: %w", r.seq, r.off, errChecksum)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(buf), "\n"), "\n") {
			var e Entry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				return nil, fmt.Errorf("decode wal record of segment %d at %d: %w", r.seq, r.off, err)
			}
			e.Sum = 0 // the record's CRC-32 was checked above (or trusted)
			if e.Index >= from && e.Index <= to {
				out = append(out, e)
			}
		}
	}
	if uint64(len(out)) != to-from+1 {
		return nil, fmt.Errorf("wal records hold %d of entries %d..%d", len(out), from, to)
	}
	return out, nil
}

// segments lists the numbers of the segments in dir, in order.
func segments(dir string) ([]int, error) {
	names, err := filepath.Glob(filepath.Join(dir, "wal-*.log"))
	if err != nil {
		return nil, err
	}
	var seqs []int
	for _, n := range names {
		var seq int
		if _, err := fmt.Sscanf(filepath.Base(n), "wal-%06d.log", &seq); err == nil {
			seqs = append(seqs, seq)
		}
	}
	sort.Ints(seqs)
	return seqs, nil
}

// openWAL replays every segment of dir and opens a fresh segment for
// appends. A torn last line (a crash mid-write) ends a segment. An entry
// whose checksum does not match its bytes (they changed on the disk) ends
// the replay there, as a torn tail does: the member goes on without it
// and what follows, which it gets again from the leader, rather than
// apply what nobody wrote; atRest says so (nil: none). With trust
// (BugAtRest) the replay applies whatever decodes.
func openWAL(dir string, trust bool) (w *wal, entries []Entry, atRest error, err error) {
	seqs, err := segments(dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list wal: %w", err)
	}
	for _, seq := range seqs {
		es, bad, err := readSegment(segmentName(dir, seq), trust)
		if err != nil {
			return nil, nil, nil, err
		}
		entries = append(entries, es...)
		if bad != nil {
			atRest = bad
			break
		}
	}
	next := 1
	if len(seqs) > 0 {
		next = seqs[len(seqs)-1] + 1
	}
	f, size, err := createSegment(dir, next)
	if err != nil {
		return nil, nil, nil, err
	}
	return &wal{dir: dir, f: f, seq: next, size: size}, entries, atRest, nil
}

// readSegment replays segment name up to a torn tail or, unless trust, an
// entry whose bytes changed on the disk (atRest).
func readSegment(name string, trust bool) (entries []Entry, atRest, err error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, fmt.Errorf("open wal segment: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, `{"segment"`) {
			continue
		}
		var e Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			break // torn tail
		}
		e, err := unsealed(e)
		if err != nil && !trust {
			return entries, fmt.Errorf("replay %s: %w", name, err), nil
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("read wal segment %s: %w", name, err)
	}
	return entries, nil, nil
}

// snapshotFile is the on-disk form of a snapshot.
type snapshotFile struct {
	Index uint64            `json:"index"`
	Data  map[string]string `json:"data"`
	// Done holds the results of applied requests by request ID.
	Done map[string]string `json:"done"`
	// Leader is the epoch of the leader process that the member followed
	// when it wrote the snapshot (0: a leader's own, or not known).
	Leader int64 `json:"leader,omitempty"`
}

const snapshotName = "snapshot.json"

// requestsFile is the on-disk form of the request table when it is kept
// apart from the snapshot (the split bug).
type requestsFile struct {
	Done map[string]string `json:"done"`
}

const requestsName = "requests.json"

// loadSnapshot reads the snapshot in dir, if any.
func loadSnapshot(dir string) (snapshotFile, error) {
	s := snapshotFile{Data: map[string]string{}, Done: map[string]string{}}
	b, err := os.ReadFile(filepath.Join(dir, snapshotName))
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read snapshot: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("decode snapshot: %w", err)
	}
	// A request table kept in a file of its own replaces the snapshot's.
	b, err = os.ReadFile(filepath.Join(dir, requestsName))
	switch {
	case err == nil:
		var r requestsFile
		if err := json.Unmarshal(b, &r); err != nil {
			return s, fmt.Errorf("decode request table: %w", err)
		}
		s.Done = r.Done
	case !errors.Is(err, os.ErrNotExist):
		return s, fmt.Errorf("read request table: %w", err)
	}
	if s.Data == nil {
		s.Data = map[string]string{}
	}
	if s.Done == nil {
		s.Done = map[string]string{}
	}
	return s, nil
}
