package campaign

import (
	"context"
	"time"
)

// pausePoll is how often a paused campaign looks whether it was resumed.
var pausePoll = 500 * time.Millisecond

// waitWhilePaused returns once the campaign is not paused (store.SetPaused,
// from gofault ui), or ctx is done; it logs the pause and the resume.
func (s *campaignRun) waitWhilePaused(ctx context.Context) error {
	logged := false
	for {
		paused, err := s.st.Paused(ctx, s.camp.ID)
		if err != nil || !paused {
			if logged && err == nil {
				s.opts.Logger.Info("campaign resumed", "campaign", s.camp.ID)
			}
			return err
		}
		if !logged {
			s.opts.Logger.Info("campaign paused: no new trial begins until it is resumed", "campaign", s.camp.ID)
			logged = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pausePoll):
		}
	}
}
