package store

import (
	"cmp"
	"context"
)

// Latest returns the campaign that report shows by default: the
// newest campaign that is not a replay and ran trials (ran counts them by
// campaign, trials that could not run left out), so a campaign that failed
// before its first trial ran (its cluster could not start) does not hide
// the one before it; with no such campaign, the newest that is not a
// replay.
func Latest(camps []*Campaign, ran map[int64]int) int64 {
	var id, withTrials int64
	for _, c := range camps {
		if c.Policy == "replay" {
			continue
		}
		id = max(id, c.ID)
		if ran[c.ID] > 0 {
			withTrials = max(withTrials, c.ID)
		}
	}
	return cmp.Or(withTrials, id)
}

// DefaultCampaign is Latest of camps, campaigns of s.
func (s *Store) DefaultCampaign(ctx context.Context, camps []*Campaign) (int64, error) {
	counts, err := s.TrialsRun(ctx)
	if err != nil {
		return 0, err
	}
	return Latest(camps, counts), nil
}
