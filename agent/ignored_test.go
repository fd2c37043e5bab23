package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/gofault/gofault/agent/wire"
)

// TestIgnored: Ignored, Ignored2 and Ignored3 pass their results on, and
// write one line naming their caller's file:line when the error is one the
// process injected (the value, one wrapping it, or one quoting its text);
// nothing for nil, for another error, or before anything was injected.
func TestIgnored(t *testing.T) {
	var out strings.Builder
	ignoredOut = &out
	defer func() {
		ignoredOut = nil
		injected.errs = nil
	}()
	line := func() int { _, _, l, _ := runtime.Caller(1); return l }
	eio := &fs.PathError{Op: "open", Path: "/d/wal", Err: syscall.EIO}

	if err := Ignored(eio); err != eio || out.Len() != 0 {
		t.Fatalf("before injection: %v, wrote %q", err, out.String())
	}
	if got := Injected(eio); got != eio {
		t.Fatalf("Injected returned %v", got)
	}
	for _, tc := range []struct {
		name  string
		call  func() (int, error)
		write bool
	}{
		{"nil", func() (int, error) { return line(), Ignored(nil) }, false},
		{"the injected error", func() (int, error) { return line(), Ignored(eio) }, true},
		{"wrapped, two results", func() (int, error) {
			return line(), second(Ignored2(7, fmt.Errorf("create: %w", eio)))
		}, true},
		{"its text, three results", func() (int, error) {
			return line(), third(Ignored3("a", 1, errors.New("start: "+eio.Error())))
		}, true},
		{"another error", func() (int, error) { return line(), Ignored(errors.New("address already in use")) }, false},
		{"the same errno, another error", func() (int, error) {
			return line(), Ignored(&fs.PathError{Op: "read", Path: "/d/snap", Err: syscall.EIO})
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out.Reset()
			l, err := tc.call()
			got := out.String()
			if !tc.write {
				if got != "" {
					t.Errorf("wrote %q for %v", got, err)
				}
				return
			}
			want := fmt.Sprintf("ignored_test.go:%d: %v\n", l, err)
			if !strings.HasPrefix(got, wire.IgnoredPrefix) || !strings.HasSuffix(got, want) || strings.Count(got, "\n") != 1 {
				t.Errorf("wrote %q, want one line %q…%q", got, wire.IgnoredPrefix, want)
			}
		})
	}
}

// second and third return the error of Ignored2's and Ignored3's results.
func second(_ int, err error) error          { return err }
func third(_ string, _ int, err error) error { return err }

// TestMarkStrikes: with strikes marked, act writes wire.StrikeLine once
// for each fault it carries out (an error, a delay) and nothing for a
// call it lets run; unmarked, nothing.
func TestMarkStrikes(t *testing.T) {
	var out strings.Builder
	ignoredOut = &out
	defer func() { ignoredOut, markStrikes = nil, false }()
	for _, tc := range []struct {
		mark bool
		resp wire.Response
		want string
	}{
		{true, wire.Response{Action: wire.ActNone}, ""},
		{true, wire.Response{Action: wire.ActError, Arg: 1}, wire.StrikeLine},
		{true, wire.Response{Action: wire.ActDelay, Arg: 1}, wire.StrikeLine},
		{false, wire.Response{Action: wire.ActError, Arg: 1}, ""},
	} {
		out.Reset()
		markStrikes = tc.mark
		act(nil, tc.resp, nil)
		if out.String() != tc.want {
			t.Errorf("mark %v, action %d: wrote %q, want %q", tc.mark, tc.resp.Action, out.String(), tc.want)
		}
	}
}
