package gotest

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Report is a line a test file wrote to the test's stdout (t.Error,
// t.Fatal, t.Log from a _test.go file: testLine), with the time gofault
// read it.
type Report struct {
	Line string
	// At is when gofault read the line from the test process's stdout:
	// -test.v streams a test's log lines as they are written, so to within
	// the pipe's copy this is when the test reported it.
	At time.Time
	// Wait is set when the line reports a wait of the test's own that ran
	// out (waitReport): its words say so ("timed out", "timeout",
	// "deadline exceeded", "in time"), or it is written in a select case
	// that a timer or a context's end chose.
	Wait bool
}

// maxReports bounds the reports an attempt keeps: a test that writes
// more from its own file is judged on its first ones.
const maxReports = 200

// reportClock is an io.Writer for a test process's stdout that keeps the
// lines a test file wrote (testLine) with the time each was read.
type reportClock struct {
	mu      sync.Mutex
	partial []byte
	reports []Report
	now     func() time.Time
	// test, when set, is the test the process runs: the clock calls
	// onEnd (if set) at the line that ends its first top-level run, and
	// keeps when it read the line that starts its second (again.go).
	test  string
	onEnd func()
	ended bool
	runs  int
	began time.Time
}

// Write implements io.Writer.
func (c *reportClock) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	data := append(c.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		line := string(data[:i])
		data = data[i+1:]
		if len(c.reports) < maxReports && testLine.MatchString(line) {
			c.reports = append(c.reports, Report{Line: line, At: now})
		}
		if c.test != "" {
			c.mark(line, now)
		}
	}
	c.partial = append(c.partial[:0], data...)
	return len(p), nil
}

// mark follows the runs of c.test: onEnd at the first run's end line,
// once; began at the second run's start line.
func (c *reportClock) mark(line string, now time.Time) {
	switch {
	case !c.ended && endLine(c.test, line):
		c.ended = true
		if c.onEnd != nil {
			c.onEnd()
		}
	case line == runLine(c.test):
		c.runs++
		if c.runs == 2 {
			c.began = now
		}
	}
}

// Began returns when the clock read the line that started the test's
// second run; zero if it never did.
func (c *reportClock) Began() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.began
}

// Reports returns the reports read so far, each marked Wait by waitReport
// with the test files of dir.
func (c *reportClock) Reports(dir string) []Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	sources := map[string][]string{}
	src := func(file string) []string {
		if lines, ok := sources[file]; ok {
			return lines
		}
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			sources[file] = nil
			return nil
		}
		sources[file] = strings.Split(string(data), "\n")
		return sources[file]
	}
	out := make([]Report, len(c.reports))
	for i, r := range c.reports {
		r.Wait = waitReport(r.Line, src)
		out[i] = r
	}
	return out
}

// waitWords are the words of a report of a wait that ran out.
var waitWords = regexp.MustCompile(`(?i)\btimed? ?out\b|\btimeout\b|deadline exceeded|\bin time\b`)

// reportAt parses a test line's file and line number ("stream_test.go",
// 74).
var reportAt = regexp.MustCompile(`^\s+([\w.-]+_test\.go):(\d+): `)

// waitCase matches a select case that a timer or a context's end
// chooses: case <-time.After(…), <-timer.C, <-time.Tick(…), <-ctx.Done().
var waitCase = regexp.MustCompile(`^case\s+<-\s*(time\.After\(|time\.Tick\(|[\w.]+\.C\s*:|[\w.()]*Done\(\)\s*:)`)

// waitReport reports whether a test's report line is a wait of its own
// that ran out: its words say so, or the line src (the lines of the test
// file it names) holds is in a select case that a timer or a context's end
// chose — the nearest case above it, within a few lines, is waitCase's.
// The code under test's own errors ("context deadline exceeded" returned
// by a call) say "deadline exceeded" too: waitReport is asked only about
// lines written from the test's file, and the timing rule only while a
// delay held the call.
func waitReport(line string, src func(file string) []string) bool {
	if waitWords.MatchString(line) {
		return true
	}
	m := reportAt.FindStringSubmatch(line)
	if m == nil || src == nil {
		return false
	}
	n, err := strconv.Atoi(m[2])
	lines := src(m[1])
	if err != nil || n < 1 || n > len(lines) {
		return false
	}
	for i := n - 2; i >= max(0, n-6); i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "case ") || strings.HasPrefix(l, "default:") || strings.HasPrefix(l, "select {") {
			return waitCase.MatchString(l)
		}
	}
	return false
}
