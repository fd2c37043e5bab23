package server

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// recoveryMarker is the file that BugRecover leaves in the data dir while a
// restarted node replays its log.
const recoveryMarker = "recovering"

// beginRecovery (BugRecover only) marks a restart's log replay in the data
// dir and reports whether the marker was there already: the previous
// recovery was interrupted.
func beginRecovery(dir string, b Bugs) (interrupted bool, err error) {
	if !b.recoverReset {
		return false, nil
	}
	p := filepath.Join(dir, recoveryMarker)
	if _, err := os.Stat(p); err == nil {
		return true, nil
	}
	seqs, err := segments(dir)
	if err != nil || len(seqs) == 0 {
		return false, err // a fresh node has nothing to recover
	}
	return false, os.WriteFile(p, nil, 0o644)
}

// endRecovery removes the marker of beginRecovery.
func endRecovery(dir string, b Bugs) error {
	if !b.recoverReset {
		return nil
	}
	err := os.Remove(filepath.Join(dir, recoveryMarker))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// distrustLog is BugRecover's mistake: after an interrupted recovery it
// keeps only the log entries the snapshot covers, taking the rest for the
// half-replayed remains of the interrupted run — committed, acknowledged
// entries included.
func distrustLog(entries []Entry, snapIndex uint64) []Entry {
	if uint64(len(entries)) > snapIndex {
		return entries[:snapIndex]
	}
	return entries
}
