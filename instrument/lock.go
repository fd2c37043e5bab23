package instrument

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockWorkDir takes an exclusive lock on the build work dir for one build
// (Prepare, analysis and Build), so that concurrent builds of one config
// wait for each other instead of rewriting each other's modfile and
// overlay. Call the returned function to release it.
func LockWorkDir(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("work dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock work dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock work dir: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
