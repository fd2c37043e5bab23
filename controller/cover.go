package controller

import (
	"fmt"

	"github.com/gofault/gofault/agent/wire"
)

// blockSet is a set of coverage blocks, a bitmap grown on demand.
type blockSet struct {
	bits []uint64
	n    int
}

// addEncoded adds the blocks of an EvCover event's data; indices at or
// past blocks (the catalog's count) are an error, and are not added.
func (b *blockSet) addEncoded(data []byte, blocks int) error {
	list, err := wire.DecodeBlocks(nil, data)
	if err != nil {
		return err
	}
	for _, i := range list {
		if int(i) >= blocks {
			return fmt.Errorf("block %d out of range (catalog has %d)", i, blocks)
		}
		b.add(i)
	}
	return nil
}

// add adds block i.
func (b *blockSet) add(i uint32) {
	w := int(i / 64)
	if w >= len(b.bits) {
		b.bits = append(b.bits, make([]uint64, w+1-len(b.bits))...)
	}
	if b.bits[w]&(1<<(i%64)) == 0 {
		b.bits[w] |= 1 << (i % 64)
		b.n++
	}
}

// list returns the blocks, ascending (nil when empty).
func (b *blockSet) list() []uint32 {
	if b.n == 0 {
		return nil
	}
	out := make([]uint32, 0, b.n)
	for w, word := range b.bits {
		for j := uint32(0); word != 0; j++ {
			if word&1 != 0 {
				out = append(out, uint32(w)*64+j)
			}
			word >>= 1
		}
	}
	return out
}
