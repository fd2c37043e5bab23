package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestSplitRun(t *testing.T) {
	for _, tc := range []struct {
		flags   []string
		run     string
		rest    []string
		wantErr bool
	}{
		{[]string{"-short"}, "", []string{"-short"}, false},
		{[]string{"-run", "TestRaft_", "-short"}, "TestRaft_", []string{"-short"}, false},
		{[]string{"-test.run=^TestA$", "-v"}, "^TestA$", []string{"-v"}, false},
		{[]string{"-short", "-run"}, "", nil, true},
	} {
		run, rest, err := splitRun(tc.flags)
		if (err != nil) != tc.wantErr {
			t.Errorf("splitRun(%q): err %v, want error %v", tc.flags, err, tc.wantErr)
			continue
		}
		if err == nil && (run != tc.run || !slices.Equal(rest, tc.rest)) {
			t.Errorf("splitRun(%q) = %q, %q; want %q, %q", tc.flags, run, rest, tc.run, tc.rest)
		}
	}
}

// TestTestUsage checks that gofault test refuses a command line without
// one package, or with more than one, with exit status 2 and the usage.
func TestTestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"test"}, "name the package under test"},
		{[]string{"test", "--", "-short"}, "name the package under test"},
		{[]string{"test", "./a", "./b"}, "one package, then --"},
		{[]string{"test", "--kinds", "crash", "."}, "not offered in-process"},
		{[]string{"test", "--parallel", "0", "."}, "--parallel 0: a number of at least 1 (0 with --queue), or auto"},
		{[]string{"test", "--parallel", "many", "."}, "--parallel many: a number of at least 1 (0 with --queue), or auto"},
		{[]string{"test", "--queue", "nats://127.0.0.1:1", "--parallel", "-1", "."}, "--parallel -1: a number of at least 1 (0 with --queue)"},
		{[]string{"test", "--queue", "nats://127.0.0.1:1", "--queue-slots", "0", "."}, "--queue-slots must be at least 1"},
		{[]string{"test", "--module", "../../gotest/testdata/memcluster", "--member", "Member.id", "."}, "test.member: must be pkg/path.Type.field"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("gofault %s: exit %d, stderr %q; want a failure with %q", strings.Join(tc.args, " "), code, errb.String(), tc.want)
		}
	}
}

// TestTestHelp checks that gofault test -h exits 0 (its usage goes to
// stderr, with every flag).
func TestTestHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"test", "-h"}, &out, &errb); code != 0 {
		t.Errorf("gofault test -h: exit %d, stderr %q", code, errb.String())
	}
}

// TestTestFailOn runs gofault test --fail-on findings on the planted bug
// of gotest/testdata/retrystore (its Save drops a failed write's error
// with RETRYSTORE_BUG=drop): it exits 4 with the bug on, naming the
// finding on stderr, and 0 with it off. About 5 s: two builds of a
// one-package test binary, 2 x 26 runs.
func TestTestFailOn(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		code int
		want string
	}{
		{"bug on", []string{"--env", "RETRYSTORE_BUG=drop"}, exitFound, "gofault test: --fail-on findings: 1 finding\n"},
		{"bug off", nil, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"test", "--module", "../../gotest/testdata/retrystore", "--workdir", t.TempDir(),
				"--trials", "20", "--delay", "50ms", "--parallel", "1", "--fail-on", "findings"}, tc.env...)
			var out, errb bytes.Buffer
			code := run(append(args, "."), &out, &errb)
			// The log's lines aside, stderr is the --fail-on message.
			var msg strings.Builder
			for _, line := range strings.SplitAfter(errb.String(), "\n") {
				if strings.HasPrefix(line, "gofault test: ") {
					msg.WriteString(line)
				}
			}
			if code != tc.code || msg.String() != tc.want {
				t.Errorf("exit %d, stderr %q; want %d, %q\n%s", code, msg.String(), tc.code, tc.want, errb.String())
			}
			if !strings.Contains(out.String(), "fault trials: 20 ") {
				t.Errorf("the summary is not printed before the exit status:\n%s", out.String())
			}
		})
	}
}
