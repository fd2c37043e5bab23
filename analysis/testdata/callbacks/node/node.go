// Package node is the target: it passes visitors to kv's callbacks.
package node

import (
	"errors"
	"os"

	"example.com/cb/kv"
)

// ErrBadKey is a key the node cannot read.
var ErrBadKey = errors.New("bad key")

// Count's visitor always returns nil: ForEach cannot fail there but for a
// closed transaction, which is no fault.
func Count(b *kv.Bucket) (int, error) {
	n := 0
	err := b.ForEach(func(k, v []byte) error {
		n++
		return nil
	})
	return n, err
}

// Export's visitor is kv's, which writes files: a disk site.
func Export(b *kv.Bucket, dir string) error {
	return b.ForEach(kv.Dump(dir))
}

// Check's visitor returns the node's sentinel: the site offers it.
func Check(b *kv.Bucket) error {
	return b.ForEach(func(k, v []byte) error {
		if len(k) == 0 {
			return ErrBadKey
		}
		return nil
	})
}

// Limit's visitor returns an error it captured: the node's own, nothing
// to offer.
func Limit(b *kv.Bucket, max int) error {
	tooMany := errors.New("too many keys")
	n := 0
	return b.ForEach(func(k, v []byte) error {
		n++
		if n > max {
			return tooMany
		}
		return nil
	})
}

// Copy's visitor writes to a file: its Write is the site, not ForEach.
func Copy(b *kv.Bucket, f *os.File) error {
	return b.ForEach(func(k, v []byte) error {
		_, err := f.Write(k)
		return err
	})
}

// index checks keys.
type index struct{ seen map[string]bool }

func (ix *index) add(k, v []byte) error {
	if ix.seen[string(k)] {
		return ErrBadKey
	}
	ix.seen[string(k)] = true
	return nil
}

// Index passes a method value of the node's.
func Index(b *kv.Bucket) error {
	ix := &index{seen: map[string]bool{}}
	return b.ForEach(ix.add)
}

// Append passes a method value of kv's, which writes a file.
func Append(b *kv.Bucket, l *kv.Log) error {
	return b.ForEach(l.Append)
}

// Pick passes one of two visitors: both count.
func Pick(b *kv.Bucket, l *kv.Log, strict bool) error {
	visit := func(k, v []byte) error { return nil }
	if strict {
		visit = l.Append
	}
	return b.ForEach(visit)
}

// Each passes its caller's visitor, and no caller in the program binds
// it: every function passed to ForEach anywhere, as before.
func Each(b *kv.Bucket, fn func(k, v []byte) error) error {
	return b.ForEach(fn)
}

// each passes its caller's visitor, which its only caller binds to a
// visitor that returns nil.
func each(b *kv.Bucket, fn func(k, v []byte) error) error {
	return b.ForEach(fn)
}

// Keys lists the keys through each.
func Keys(b *kv.Bucket) ([][]byte, error) {
	var ks [][]byte
	err := each(b, func(k, v []byte) error {
		ks = append(ks, k)
		return nil
	})
	return ks, err
}

// Save's function cannot fail: Update's own commit is the site.
func Save(db *kv.DB) error {
	return db.Update(func(b *kv.Bucket) error { return nil })
}

// SaveChecked's function returns the node's sentinel or nil.
func SaveChecked(db *kv.DB) error {
	return db.Update(func(b *kv.Bucket) error { return Check(b) })
}

// visitAll passes its caller's visitor, which its callers bind to the
// node's checking visitor and to kv's disk writer: kv's errors count, the
// node's sentinel is offered where the node passes it, not here (every
// caller of visitAll shares this call).
func visitAll(b *kv.Bucket, fn func(k, v []byte) error) error {
	return b.ForEach(fn)
}

// Verify passes the node's checking visitor to visitAll.
func Verify(b *kv.Bucket) error {
	return visitAll(b, func(k, v []byte) error {
		if len(k) == 0 {
			return ErrBadKey
		}
		return nil
	})
}

// Backup passes kv's disk writer to visitAll.
func Backup(b *kv.Bucket, dir string) error {
	return visitAll(b, kv.Dump(dir))
}

// forwardChecked passes its caller's visitor, which its only caller binds
// to the node's checking visitor.
func forwardChecked(b *kv.Bucket, fn func(k, v []byte) error) error {
	return b.ForEach(fn)
}

// Validate passes the node's checking visitor to forwardChecked.
func Validate(b *kv.Bucket) error {
	return forwardChecked(b, func(k, v []byte) error {
		if len(k) == 0 {
			return ErrBadKey
		}
		return nil
	})
}
