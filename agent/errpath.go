package agent

import (
	"io/fs"
	"os"
)

// WithPaths fills in the file names of an injected error that the
// catalog could only give without them: the Path of an *fs.PathError
// (paths[0]), the Old and New of an *os.LinkError (paths[0], paths[1]),
// where they are empty. The generated fault branch passes the call's
// file-name arguments (or an *os.File's Name), so that the error reads as
// the real one would: "open /data/wal/0001.wal: input/output error", not
// "open : input/output error". Any other error is returned as it is.
func WithPaths(err error, paths ...string) error {
	switch e := err.(type) {
	case *fs.PathError:
		if e.Path == "" && len(paths) > 0 {
			e.Path = paths[0]
		}
	case *os.LinkError:
		if e.Old == "" && len(paths) > 0 {
			e.Old = paths[0]
		}
		if e.New == "" && len(paths) > 1 {
			e.New = paths[1]
		}
	}
	return err
}
