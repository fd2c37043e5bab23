package instrument

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// BuildLockFile is WaitForBuildDir's lock file inside the build work dir.
const BuildLockFile = ".lock"

// WaitForBuildDir waits until no other build uses the build work dir dir
// (Target.WorkDir, e.g. <work dir>/build), then holds it for one build
// (Prepare, analysis and Build) until the returned release is called or the
// process exits, so that concurrent builds of one config take turns instead
// of rewriting each other's modfile and overlay.
//
// It is not workdir.Lock, which guards a whole gofault command's work dir
// and refuses a second command at once, naming the holder: a build waits
// its turn, because what builds or analyses without that command lock
// (gofault analyze; callers of package build such as tests) must queue
// behind a running build, not fail or read its half-written work dir. The
// two locks are different files, so a command holding workdir.Lock on the
// work dir takes this one on its build dir without deadlocking itself.
func WaitForBuildDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("build work dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, BuildLockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock build work dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock build work dir: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
