//go:build linux && (amd64 || arm64)

// Command walfsync reproduces, without gofault, the etcd WAL bug found by
// `gofault test` on etcd's wal tests (docs/gotest.md, "nil WAL and a nil
// error"; releases v3.5.35, v3.6.16 and v3.7.4, rates in README.md): when
// wal.Create's fsync of the WAL directory's parent fails, Create calls
// dirCloser, which overwrites the fsync error with pdir.Close()'s nil, and
// returns (nil, nil). Its deferred cleanupWAL (run only if perr != nil) is
// skipped, so the renamed WAL directory stays, and a caller shaped like
// etcd's bootstrapNewWAL (panic on error, else use the WAL) dereferences
// the nil WAL.
//
// Each round re-executes this program as a child. The child installs a
// seccomp filter on every thread that makes the fsync system call fail with
// EIO (all other calls run), calls wal.Create on a new directory, uses the
// WAL as etcd's server does, and reports what it saw and what Create
// logged. Inside Create the only fsync is the parent directory's
// (fileutil.Fsync, os.File.Sync): the WAL's own records are flushed by
// fdatasync (fileutil.Fdatasync), the segment is preallocated by
// fallocate, and the fsync of a WAL's directory in cut is not reached from
// Create. The logged warning names the step that failed (its error field
// is lost too). The parent then looks at the directory.
//
//	cd targets/etcd && go run ./repro/walfsync -rounds 20
//	cd targets/etcd && go run ./repro/walfsync -control -rounds 20   # no filter: Create succeeds
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
	"unsafe"

	"go.etcd.io/etcd/server/v3/wal"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/sys/unix"
)

// childEnv names the WAL directory a child process creates its WAL in.
const childEnv = "WALFSYNC_CHILD_DIR"

// report is what a child saw; it writes it to stdout as JSON.
type report struct {
	Filtered bool     // the fsync filter was installed
	NilWAL   bool     // Create returned a nil *WAL
	Err      string   // Create's error, "" if nil
	Warnings []string // the messages Create logged, each with its error field if it has one
	Use      string   // what using the WAL as bootstrapNewWAL does gave: "ok" or the panic
}

func main() {
	if dir := os.Getenv(childEnv); dir != "" {
		child(dir, os.Getenv("WALFSYNC_CONTROL") == "")
		return
	}
	rounds := flag.Int("rounds", 20, "rounds, each a child process creating a WAL in a new directory")
	control := flag.Bool("control", false, "install no filter (Create must then succeed)")
	verbose := flag.Bool("v", false, "print every round")
	flag.Parse()
	base, err := os.MkdirTemp("", "walfsync")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(base)
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}

	start := time.Now()
	var bug, fsyncErr, ok int
	var example string
	for i := 1; i <= *rounds; i++ {
		dir := filepath.Join(base, fmt.Sprint(i), "member", "wal")
		line, kind, err := round(self, dir, *control)
		if err != nil {
			log.Fatalf("round %d: %v", i, err)
		}
		line = fmt.Sprintf("round %d: %s", i, line)
		if *verbose {
			fmt.Println(line)
		}
		switch kind {
		case "bug":
			bug++
			if example == "" {
				example = line
			}
		case "fsync error":
			fsyncErr++
		case "ok":
			ok++
		}
		if err := os.RemoveAll(filepath.Join(base, fmt.Sprint(i))); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("%d of %d rounds: Create returned a nil WAL and a nil error after the parent directory's fsync failed\n", bug, *rounds)
	fmt.Printf("Create returned the fsync error in %d rounds, succeeded in %d\n", fsyncErr, ok)
	if example != "" {
		fmt.Println("example:", example)
	}
	fmt.Printf("%v in all\n", time.Since(start).Round(time.Millisecond))
}

// round runs one child on dir and classifies what it and the directory
// show: "bug" (nil WAL, nil error), "fsync error" (Create returned the
// fsync's EIO) or "ok" (Create succeeded, no filter). Anything else is an
// error: the round did not go as this program assumes.
func round(self, dir string, control bool) (string, string, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", "", err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	if control {
		cmd.Env = append(cmd.Env, "WALFSYNC_CONTROL=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("child: %w", err)
	}
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		return "", "", fmt.Errorf("child's report %q: %w", out, err)
	}
	left := wal.Exist(dir)
	broken, err := filepath.Glob(dir + ".broken.*")
	if err != nil {
		return "", "", err
	}
	state := fmt.Sprintf("wal.Exist(dir) = %v, %d .broken dirs", left, len(broken))
	warned := strings.Join(r.Warnings, "; ")
	switch {
	case r.Filtered && r.NilWAL && r.Err == "" && left && len(broken) == 0 &&
		warned == "failed to fsync the parent data directory file":
		return fmt.Sprintf("Create returned (nil, nil), logged %q; %s; using the WAL: %s", warned, state, r.Use), "bug", nil
	case r.Filtered && r.NilWAL && r.Err == "sync "+filepath.Dir(dir)+": input/output error" &&
		!left && len(broken) == 1 && warned == "failed to fsync the parent data directory file (error: "+r.Err+")":
		return fmt.Sprintf("Create returned %q, logged %q; %s", r.Err, warned, state), "fsync error", nil
	case !r.Filtered && !r.NilWAL && r.Err == "" && left && r.Use == "ok":
		return "Create succeeded; " + state, "ok", nil
	}
	return "", "", fmt.Errorf("unexpected: report %+v, %s", r, state)
}

// child installs the filter (when filter is set), creates a WAL in dir and
// uses it, and writes its report to stdout.
func child(dir string, filter bool) {
	r := report{Filtered: filter}
	if filter {
		if err := failFsync(); err != nil {
			log.Fatal(err)
		}
	}
	core, logs := observer.New(zap.InfoLevel)
	w, err := wal.Create(zap.New(core), dir, []byte("metadata"))
	r.NilWAL = w == nil
	if err != nil {
		r.Err = err.Error()
	}
	for _, e := range logs.All() {
		msg := e.Message
		if v, ok := e.ContextMap()["error"]; ok {
			msg += fmt.Sprintf(" (error: %v)", v)
		}
		r.Warnings = append(r.Warnings, msg)
	}
	if err == nil {
		r.Use = use(w)
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		log.Fatal(err)
	}
}

// use does what etcd's bootstrapNewWAL does after `if err != nil {
// lg.Panic(...) }`: it uses the WAL. The server's next call is
// SetUnsafeNoFsync (with --unsafe-no-fsync) or, later, Save; Close stands
// for them here, as every method of *WAL starts by touching one of its
// fields. It returns "ok" or the panic's message.
func use(w *wal.WAL) (res string) {
	defer func() {
		if p := recover(); p != nil {
			res = fmt.Sprint("panic: ", p)
		}
	}()
	if err := w.Close(); err != nil {
		return "close: " + err.Error()
	}
	return "ok"
}

// failFsync makes every later fsync(2) of this process, on every thread,
// fail with EIO: a seccomp filter (after PR_SET_NO_NEW_PRIVS, so no
// privilege is needed) with SECCOMP_FILTER_FLAG_TSYNC. Other system calls,
// fdatasync included, are allowed.
func failFsync() error {
	arch := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
	)
	// struct seccomp_data: int nr at offset 0, __u32 arch at 4.
	prog := []unix.SockFilter{
		{Code: ldAbs, K: 4},
		{Code: jeq, K: arch, Jt: 0, Jf: 3}, // another ABI: allow
		{Code: ldAbs, K: 0},
		{Code: jeq, K: unix.SYS_FSYNC, Jt: 0, Jf: 1},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EIO)},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	// With TSYNC, a positive return is the id of a thread that could not
	// take the filter.
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): %w", errno)
	}
	if r != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): thread %d did not take the filter", r)
	}
	return nil
}
