package campaign

import (
	"context"
	"log/slog"
	"sync"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// recentTrials is how many of the last trials the progress line's "new
// blocks" count covers.
const recentTrials = 10

// coverage is the campaign's coverage: the union of the blocks its trials
// covered, kept in the store (store.PutCoverage) so that --resume goes on
// from it.
type coverage struct {
	mu sync.Mutex
	u  *record.Coverage // nil when the build counts no blocks
}

// coverageFrom returns the campaign's coverage from the union stored
// (nil: none), or an empty one; a union over another catalog's blocks (a
// rebuild numbered them anew) is dropped, with a warning.
func coverageFrom(u *record.Coverage, cat *catalog.Catalog, log *slog.Logger) *coverage {
	if cat.Blocks == 0 {
		return &coverage{}
	}
	if u != nil && (u.Catalog != cat.Hash || u.Blocks != cat.Blocks) {
		log.Warn("coverage: the build's blocks differ from the campaign's so far (rebuilt from other sources); starting the union afresh",
			"catalog", cat.Hash, "was", u.Catalog)
		u = nil
	}
	if u == nil {
		u = record.NewCoverage(cat.Hash, cat.Blocks)
	}
	return &coverage{u: u}
}

// add records the blocks trial tr covered: tr.Blocks and tr.NewBlocks
// (the blocks not in the union before) are set and the union grows.
func (cv *coverage) add(tr *record.Trial, blocks []uint32) {
	tr.Blocks = len(blocks)
	if cv.u == nil {
		return
	}
	cv.mu.Lock()
	defer cv.mu.Unlock()
	tr.NewBlocks = cv.u.Add(blocks)
}

// counts returns the blocks covered so far and the blocks counted.
func (cv *coverage) counts() (covered, blocks int) {
	if cv.u == nil {
		return 0, 0
	}
	cv.mu.Lock()
	defer cv.mu.Unlock()
	return cv.u.Covered, cv.u.Blocks
}

// save stores the union.
func (cv *coverage) save(ctx context.Context, st *store.Store, campaign int64) error {
	if cv.u == nil {
		return nil
	}
	cv.mu.Lock()
	u := *cv.u
	u.Bits = append([]byte(nil), cv.u.Bits...)
	cv.mu.Unlock()
	return st.PutCoverage(ctx, campaign, &u)
}

// recentNew sums the new blocks of the last recentTrials fault trials.
func recentNew(trials []*record.Trial) int {
	n, seen := 0, 0
	for i := len(trials) - 1; i >= 0 && seen < recentTrials; i-- {
		if trials[i].Policy == baselinePolicy {
			continue
		}
		n += trials[i].NewBlocks
		seen++
	}
	return n
}
