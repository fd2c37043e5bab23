package store

import (
	"context"
	"errors"
)

// blobPaused is the blob key of a campaign's pause flag.
const blobPaused = "paused"

// SetPaused pauses (or resumes) campaign id: a running campaign, in this
// process or another, begins no new fault trial while it is paused; the
// trials under way finish.
func (s *Store) SetPaused(ctx context.Context, id int64, paused bool) error {
	v := []byte{}
	if paused {
		v = []byte("1")
	}
	return s.PutBlob(ctx, id, blobPaused, v)
}

// Paused reports whether campaign id is paused (SetPaused).
func (s *Store) Paused(ctx context.Context, id int64) (bool, error) {
	v, err := s.GetBlob(ctx, id, blobPaused)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return len(v) > 0, err
}
