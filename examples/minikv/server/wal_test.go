package server

import (
	"errors"
	"os"
	"testing"
)

// TestReadEntriesChecksCRC: entries read back from the log are checked
// against the CRC-32 kept at append, unless the unchecked bug trusts
// them; entries the index does not hold are not read.
func TestReadEntriesChecksCRC(t *testing.T) {
	cases := []struct {
		name     string
		flip     bool // flip a bit of a value on disk
		trust    bool
		from, to uint64
		want     string // the value of entry 2 read, "" for none
		err      error
	}{
		{"clean read", false, false, 1, 3, "bbb", nil},
		{"a flipped bit is refused", true, false, 1, 3, "", errChecksum},
		{"a flipped bit is trusted with the bug", true, true, 2, 2, "bcb", nil},
		{"beyond the index", false, false, 4, 5, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			w, _, _, err := openWAL(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			defer w.f.Close()
			if err := w.append([]Entry{{Index: 1, Op: "put", Key: "a", Value: "aaa"}, {Index: 2, Op: "put", Key: "b", Value: "bbb"}}); err != nil {
				t.Fatal(err)
			}
			if err := w.append([]Entry{{Index: 3, Op: "put", Key: "c", Value: "ccc"}}); err != nil {
				t.Fatal(err)
			}
			if c.flip {
				name := segmentName(dir, w.seq)
				b, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				i := len(b) - 1
				for string(b[i-3:i]) != "bbb" {
					i--
				}
				b[i-2] ^= 1 // "bbb" -> "bcb"
				if err := os.WriteFile(name, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			es, err := w.readEntries(c.from, c.to, c.trust)
			if !errors.Is(err, c.err) || (c.err == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			got := ""
			for _, e := range es {
				if e.Index == 2 {
					got = e.Value
				}
			}
			if got != c.want {
				t.Fatalf("entry 2 = %q, want %q (entries %+v)", got, c.want, es)
			}
		})
	}
}
