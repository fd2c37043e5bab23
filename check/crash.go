package check

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/gofault/gofault/record"
)

// Crash reports nodes that exited or died while the trial ran without
// gofault having killed them (record.Node.Killed), quoting the panic or
// fatal line of the node's log when there is one.
type Crash struct{}

// Name implements Checker.
func (Crash) Name() string { return NameCrash }

// Check implements Checker.
func (Crash) Check(_ context.Context, in *Input) record.Verdict {
	v := pass(NameCrash)
	var symptoms []string
	for _, n := range in.Trial.Nodes {
		if !n.Exited || n.Killed {
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
		if d, ok := deathNote(n.Log); ok {
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
		v.Evidence = capEvidence(v.Evidence)
	}
	return v
}

// death is the last words of a node found in its log.
type death struct {
	kind     string // "panicked" or "fatal"
	line     string // the line as logged
	template string // normalized message
	where    string // first non-runtime function of the panicking goroutine
}

// deathNote scans a node log for a Go panic, a runtime fatal error or a
// panic/fatal-level structured log line, and returns the last one.
func deathNote(path string) (death, bool) {
	var d death
	found := false
	if path == "" {
		return d, false
	}
	f, err := os.Open(path)
	if err != nil {
		return d, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	inTrace := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: "):
			kind, msg := "panicked", strings.TrimPrefix(line, "panic: ")
			if strings.HasPrefix(line, "fatal error: ") {
				kind, msg = "fatal", strings.TrimPrefix(line, "fatal error: ")
			}
			d = death{kind: kind, line: line, template: normalize(msg)}
			found, inTrace = true, true
		case strings.HasPrefix(line, "{"):
			var j struct {
				Level string `json:"level"`
				Msg   string `json:"msg"`
			}
			if json.Unmarshal([]byte(line), &j) == nil && (j.Level == "panic" || j.Level == "dpanic" || j.Level == "fatal") {
				d = death{kind: "fatal", line: line, template: normalize(j.Msg)}
				if j.Level != "fatal" {
					d.kind = "panicked"
				}
				found, inTrace = true, true
			}
		case inTrace && d.where == "" && strings.HasPrefix(line, "goroutine "):
		case inTrace && d.where == "" && strings.HasSuffix(line, ")") && !skipFrame(line):
			if i := strings.LastIndex(line, "("); i > 0 {
				d.where = line[:i]
			}
		}
	}
	return d, found
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
