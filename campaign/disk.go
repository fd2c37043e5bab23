package campaign

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// keeper bounds the disk the trials of a work dir use. A trial dir holds
// the members' data dirs (subdirectories, e.g. <trial>/n1) and the logs
// (files, e.g. <trial>/n1.log, workload.log). Every trial keeps its logs; a
// trial that passed or could not run loses its data dirs as soon as it is
// judged; a failed trial's are packed (packTrial: the members its faults
// hit whole but their ending zeros, the others' file lists) and only the
// newest max failed trials keep their pack, for debugging and replays.
type keeper struct {
	mu   sync.Mutex
	max  int
	kept []string // failed trial dirs that still hold data, oldest first
}

// newKeeper finds the trial dirs under root that still hold data (from
// earlier runs, oldest first by modification time), prunes all but the
// newest max of them and packs those of the rest whose data dirs are not
// packed yet (left by a gofault that did not pack: every member whole, as
// which one a fault hit is not known here).
func newKeeper(root string, max int) (*keeper, error) {
	k := &keeper{max: max}
	ents, err := os.ReadDir(root)
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("trial dirs: %w", err)
	}
	type dated struct {
		dir string
		mod time.Time
	}
	var ds []dated
	for _, e := range ents {
		dir := filepath.Join(root, e.Name())
		if !e.IsDir() || !holdsData(dir) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		ds = append(ds, dated{dir, info.ModTime()})
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].mod.Before(ds[j].mod) })
	for _, d := range ds {
		k.kept = append(k.kept, d.dir)
	}
	if err := k.prune(); err != nil {
		return nil, err
	}
	for _, dir := range k.kept {
		if _, err := packTrial(dir, nil); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// tidy applies the rule to a trial dir once its trial is judged and
// saved: it drops the data dirs of a trial that did not fail, packs a
// failed one's; full are the members a failed trial keeps whole
// (hitMembers; nil: all).
func (k *keeper) tidy(dir string, failed bool, full []string) error {
	if !failed {
		return pruneData(dir)
	}
	if _, err := packTrial(dir, full); err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kept = append(k.kept, dir)
	return k.pruneLocked()
}

func (k *keeper) prune() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pruneLocked()
}

// pruneLocked drops the data of the oldest kept dirs beyond max.
func (k *keeper) pruneLocked() error {
	for len(k.kept) > k.max {
		if err := pruneData(k.kept[0]); err != nil {
			return err
		}
		k.kept = k.kept[1:]
	}
	return nil
}

// holdsData reports whether a trial dir has any subdirectory or a pack
// left.
func holdsData(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() || e.Name() == PackName {
			return true
		}
	}
	return false
}

// pruneData removes the subdirectories of a trial dir (the members' data
// and anything the workload made) and its pack, keeping its other files
// (the logs).
func pruneData(dir string) error {
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("prune trial data: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() || e.Name() == PackName || e.Name() == PackList {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("prune trial data: %w", err)
			}
		}
	}
	return nil
}

// dirSize returns the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
