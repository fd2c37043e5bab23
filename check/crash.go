package check

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// Crash reports nodes that exited or died while the trial ran without
// gofault having killed them (record.Node.Killed), quoting the panic or
// fatal line of the node's log when there is one.
//
// A node that stops on bytes a corrupt fault altered, saying so (a
// checksum or corruption error: detectedCorruption), detected the
// corruption and refused it, which is informational too.
//
// A node that stops on an error injected into it is failing fast, as it
// should, and is informational: it exits with an error status during
// start-up without panicking (it refused to start), or at any time its last
// words are a fatal or panic-level log line that carries the error (etcd's
// "failed to commit tx" with the I/O error). A runtime panic (nil pointer,
// index out of range), a logged panic without an error (an assertion), a
// death by signal, or a death on another node than the injected one is a
// crash.
//
// A node that does not come back when gofault restarts it after a crash
// fault (it exits, or never gets ready: record.Node.RestartErr) is a crash
// too, quoting the end of its log — unless a fault hit that node again
// during the restart, which is then said, informationally.
type Crash struct{}

// Name implements Checker.
func (Crash) Name() string { return NameCrash }

// Check implements Checker.
func (Crash) Check(_ context.Context, in *Input) record.Verdict {
	v := pass(NameCrash)
	var symptoms, info []string
	infoSymptom := "informational: node stopped on an injected error"
	wlStart, _ := workloadSpan(in.Trial)
	for _, n := range in.Trial.Nodes {
		if n.RestartErr == "" {
			continue
		}
		if f, ok := faultDuringRestart(in.Trial, n); ok {
			info = append(info, fmt.Sprintf("informational: node %s did not come back after a crash fault, but a %s fault hit it again during its restart (%s)", n.Name, f.Kind, n.RestartErr))
			infoSymptom = "informational: a fault hit a node's restart"
			continue
		}
		if line, inj, ok := detectedCorruption(in, n); ok && inj.Kind == catalog.KindRot {
			// Its restart read the rotten bytes back and refused them.
			info = append(info, corruptionInfo(n, line, inj))
			infoSymptom = "informational: node stopped on a corruption it detected"
			continue
		}
		v.Failed = true
		v.Nodes = append(v.Nodes, n.Name)
		ev := fmt.Sprintf("node %s did not come back after a crash fault: %s", n.Name, n.RestartErr)
		if t := logTail(in.Logs, n, 5); t != "" {
			ev += "\n--- last lines of its log ---\n" + t
		}
		v.Evidence = append(v.Evidence, ev)
		symptoms = append(symptoms, "node did not come back after a crash fault")
	}
	for _, n := range in.Trial.Nodes {
		if !n.Exited || n.Killed || crashInjected(in.Trial, n) || n.RestartErr != "" {
			continue
		}
		if startupExit(in, n, wlStart) {
			info = append(info, fmt.Sprintf("informational: node %s exited with status %d during start-up, after an error was injected into it: it refused to start, which is not a crash", n.Name, n.ExitCode))
			continue
		}
		if d, ok := failStop(in, n); ok {
			info = append(info, fmt.Sprintf("informational: node %s stopped on the error injected into it (%s): it failed fast, which is not a crash", n.Name, d.line))
			continue
		}
		if line, inj, ok := detectedCorruption(in, n); ok {
			info = append(info, corruptionInfo(n, line, inj))
			infoSymptom = "informational: node stopped on a corruption it detected"
			continue
		}
		v.Failed = true
		v.Nodes = append(v.Nodes, n.Name)
		how := fmt.Sprintf("exited with status %d", n.ExitCode)
		if n.Signal != "" {
			how = "was killed by " + n.Signal
		}
		ev := fmt.Sprintf("node %s (pid %d) %s at %s", n.Name, n.PID, how, clock(n.ExitTime))
		symptom := "node " + how
		if d, ok := deathNote(in.Logs, n); ok {
			ev += ": " + d.line
			symptom = "node " + d.kind + ": " + d.template
			if d.where != "" {
				symptom += " in " + d.where
				ev += " in " + d.where
			}
		}
		v.Evidence = append(v.Evidence, ev)
		symptoms = append(symptoms, symptom)
	}
	if v.Failed {
		// One node's symptom is the cluster key; several nodes dying the
		// same way share it.
		v.Symptom = symptoms[0]
	} else if len(info) > 0 {
		v.Symptom = infoSymptom
	}
	v.Evidence = capEvidence(append(v.Evidence, info...))
	return v
}

// crashInjected reports whether n died of SIGKILL after gofault injected a
// crash into it, in case the runner did not mark the kill.
func crashInjected(tr *record.Trial, n record.Node) bool {
	if n.Signal != "SIGKILL" && n.Signal != "killed" {
		return false
	}
	for _, in := range tr.Injections {
		if in.Node == n.Name && in.Kind.Kills() && (n.ExitTime.IsZero() || !in.Time.After(n.ExitTime)) {
			return true
		}
	}
	return false
}

// faultDuringRestart returns the first fault injected into n after the
// first crash fault on n, if any: a fault that hit the restart itself.
func faultDuringRestart(tr *record.Trial, n record.Node) (record.Injection, bool) {
	var crashed time.Time
	for _, in := range tr.Injections {
		if in.Node != n.Name {
			continue
		}
		if crashed.IsZero() {
			if in.Kind.Kills() {
				crashed = in.Time
			}
			continue
		}
		if in.Time.After(crashed) {
			return in, true
		}
	}
	return record.Injection{}, false
}

// logTail returns the last k non-empty lines of node n's log in logs (""
// if it has none or it cannot be read).
func logTail(logs fs.FS, n record.Node, k int) string {
	data, err := readLog(logs, n)
	if err != nil {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(0, len(lines)-k):], "\n")
}

// startupExit reports whether node n exited with an error status before the
// workload started (or with no workload at all) after gofault injected an
// error into it, without a panic or a signal: a node that refuses to start
// on an error — a failed config check, an unreadable data dir — fails fast
// as it should.
func startupExit(in *Input, n record.Node, wlStart time.Time) bool {
	if n.Signal != "" || n.ExitCode == 0 || (!wlStart.IsZero() && !n.ExitTime.Before(wlStart)) {
		return false
	}
	injected := false
	for _, inj := range in.Trial.Injections {
		if inj.Node == n.Name && inj.Kind == catalog.KindError && !inj.Time.After(n.ExitTime) {
			injected = true
		}
	}
	if !injected {
		return false
	}
	d, ok := deathNote(in.Logs, n)
	return !ok || d.kind != "panicked"
}

// failStop reports whether node n stopped on purpose on an error injected
// into it: after the injection, without a signal, its last words a fatal or
// logged panic that carries an error (not a runtime panic, not an
// assertion).
func failStop(in *Input, n record.Node) (death, bool) {
	if n.Signal != "" || n.ExitCode == 0 {
		return death{}, false
	}
	injected := false
	var errs []string // the injected errors
	for _, inj := range in.Trial.Injections {
		if inj.Node == n.Name && inj.Kind == catalog.KindError && (n.ExitTime.IsZero() || !inj.Time.After(n.ExitTime)) {
			injected = true
			errs = append(errs, inj.Error)
		}
	}
	if !injected {
		return death{}, false
	}
	d, ok := deathNote(in.Logs, n)
	if !ok {
		return d, false
	}
	// A structured fatal or panic line that carries an error, or a Go
	// panic whose message quotes an error injected into the node: the
	// node gave up on it on purpose (hashicorp/raft panics when restoring
	// a snapshot into its state machine fails, "failed to restore
	// snapshot: failed to open snapshot …: read : input/output error").
	// A runtime panic, an assertion, or a panic that names no injected
	// error is judged.
	return d, d.cause != "" || d.kind == "panicked" && d.quotes(errs)
}

// quotes reports whether last words d quote one of errs, injected errors
// (record.Injection.Error, matched by the texts they show as,
// InjectedTexts): the error its structured line carries, or its line.
func (d death) quotes(errs []string) bool {
	for _, e := range errs {
		for _, t := range errorTexts(e) {
			if strings.Contains(d.cause, t) || strings.Contains(d.line, t) {
				return true
			}
		}
	}
	return false
}

// FailStop returns the last words of a process's output — a Go panic, a
// runtime fatal error, or a panic- or fatal-level line of a structured
// logger (zap's JSON or console encoder, also as t.Log writes it, behind
// its "file.go:N: ") — when they quote one of errs, the errors injected
// into the process (record.Injection.Error): the code stopped the process
// on the injected error on purpose, as the crash checker's fail-stop
// (failStop) judges a node. A logged panic keeps the error of its log
// line through the Go panic that follows it (zap's Panic panics with the
// message alone). ok is false when there are no last words, when they
// quote no injected error (a nil dereference after the error, an
// assertion), or when they are a structured line logged before inj, the
// earliest time an injected error could have been seen: a fatal before
// the injection was not about it.
func FailStop(output string, errs []string, inj time.Time) (line string, ok bool) {
	d, found := lastWords(strings.NewReader(output))
	if !found || !d.quotes(errs) {
		return "", false
	}
	// A line's time is as precise as it is written (zap's console encoder
	// writes milliseconds): a fatal in the millisecond of the injection
	// is after it.
	if !d.at.IsZero() && !inj.IsZero() && d.at.Before(inj.Truncate(stampPrecision(d.line))) {
		return "", false
	}
	return d.line, true
}

// stampFraction finds the fraction of the seconds of a line's timestamp.
var stampFraction = regexp.MustCompile(`:\d\d[.,](\d{1,9})`)

// stampPrecision returns how precise the timestamp that line starts with
// is: a millisecond for "04:21:13.348", a second when it writes no
// fraction.
func stampPrecision(line string) time.Duration {
	m := stampFraction.FindStringSubmatch(line[:min(len(line), 40)])
	if m == nil {
		return time.Second
	}
	p := time.Second
	for range len(m[1]) {
		p /= 10
	}
	return p
}

// death is the last words of a node found in its log.
type death struct {
	kind     string // "panicked" or "fatal"
	line     string // the line as logged
	template string // normalized message
	where    string // first non-runtime function of the panicking goroutine
	// cause is the error a structured fatal or panic line carries (its
	// "error" field); empty for runtime panics and assertions.
	cause string
	// at is a structured line's time; zero for a Go panic or when the
	// line has none.
	at time.Time
}

// deathNote scans node n's log in logs for a Go panic, a runtime fatal
// error or a panic/fatal-level structured log line, and returns the last
// one.
func deathNote(logs fs.FS, n record.Node) (death, bool) {
	f, err := openLog(logs, n)
	if err != nil || f == nil {
		return death{}, false
	}
	defer f.Close()
	return lastWords(f)
}

// tLogPrefix is what t.Log writes before a line: indented "file.go:N: ".
var tLogPrefix = regexp.MustCompile(`^[\w.-]+\.go:\d+: `)

// lastWords scans a log for a Go panic, a runtime fatal error or a
// panic/fatal-level structured log line (zap's JSON or console encoder,
// t.Log's prefix allowed), and returns the last one.
func lastWords(r io.Reader) (death, bool) {
	var d death
	found := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	inTrace := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if loc := tLogPrefix.FindStringIndex(line); loc != nil {
			line = line[loc[1]:]
		}
		switch {
		case strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: "):
			kind, msg := "panicked", strings.TrimPrefix(line, "panic: ")
			if strings.HasPrefix(line, "fatal error: ") {
				kind, msg = "fatal", strings.TrimPrefix(line, "fatal error: ")
			}
			next := death{kind: kind, line: line, template: normalize(msg)}
			if found && inTrace && d.kind == "panicked" && d.cause != "" && d.template == next.template {
				// zap's Panic: the logged line, then the Go panic with its
				// message; the line carries the error.
				next.line, next.cause, next.at = d.line, d.cause, d.at
			}
			d = next
			found, inTrace = true, true
		case strings.HasPrefix(line, "{"):
			var j struct {
				Level string `json:"level"`
				Msg   string `json:"msg"`
				Error string `json:"error"`
			}
			if json.Unmarshal([]byte(line), &j) == nil && (j.Level == "panic" || j.Level == "dpanic" || j.Level == "fatal") {
				l, _ := ParseLogLine(line) // its time
				d = death{kind: "fatal", line: line, template: normalize(j.Msg), cause: j.Error, at: l.Time}
				if j.Level != "fatal" {
					d.kind = "panicked"
				}
				found, inTrace = true, true
			}
		case zapConsoleDeath.MatchString(line):
			m := zapConsoleDeath.FindStringSubmatch(line)
			d = death{kind: "fatal", line: line, template: normalize(m[2]), cause: consoleError(m[3]), at: plainTime(line)}
			if !strings.EqualFold(m[1], "fatal") {
				d.kind = "panicked"
			}
			found, inTrace = true, true
		case inTrace && d.where == "" && strings.HasPrefix(line, "goroutine "):
		case inTrace && d.where == "" && strings.HasSuffix(line, ")") && !skipFrame(line):
			if i := strings.LastIndex(line, "("); i > 0 {
				d.where = line[:i]
			}
		}
	}
	return d, found
}

// zapConsoleDeath is a panic- or fatal-level line of zap's console
// encoder, with or without its caller column (zaptest's logger adds none):
// time, level, [caller,] message, then the fields as JSON.
var zapConsoleDeath = regexp.MustCompile(`^\S+\t(?i)(dpanic|panic|fatal)\t(?:[^\t\s]+\.go:\d+\t)?([^\t]*)(?:\t(\{.*\}))?`)

// consoleError returns the "error" field of a zap console line's fields,
// "" when there is none.
func consoleError(fields string) string {
	var j struct {
		Error any `json:"error"`
	}
	if fields == "" || json.Unmarshal([]byte(fields), &j) != nil || j.Error == nil {
		return ""
	}
	return fmt.Sprint(j.Error)
}

// skipFrame reports whether a stack line is a file line or a frame of the
// runtime or a logger, which says nothing about where a panic came from.
func skipFrame(line string) bool {
	for _, p := range []string{"/", "runtime.", "panic(", "go.uber.org/zap", "log.", "created by "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}
