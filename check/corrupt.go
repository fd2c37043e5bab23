package check

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// corruptionWords are the words a target uses when it finds that bytes it
// read are bad: it checked them and refused them.
var corruptionWords = regexp.MustCompile(`(?i)(corrupt|checksum|\bcrc|hash mismatch|digest mismatch|bad magic|integrity)`)

// detectedCorruption reports whether node n stopped on purpose on bytes a
// corrupt or rot fault altered: it exited with an error status (no signal)
// after such a fault injected into it (after a rot: its restart, which
// read the rotten bytes back), and its last words — its death note,
// or one of the last lines of its log — say in the target's words that it
// found corrupt data. That is the target detecting the corruption and
// refusing to go on with it, which is fine; what it costs (a member down,
// its clients failing over) is judged by the other checkers. A runtime
// panic, a death on another member, or a stop after any other fault is not
// excused. It returns the line and the injection it is tied to.
func detectedCorruption(in *Input, n record.Node) (string, record.Injection, bool) {
	if n.Signal != "" || n.ExitCode == 0 {
		return "", record.Injection{}, false
	}
	var inj record.Injection
	found := false
	for _, i := range in.Trial.Injections {
		if i.Node == n.Name && (i.Kind == catalog.KindCorrupt || i.Kind == catalog.KindRot) && (n.ExitTime.IsZero() || !i.Time.After(n.ExitTime)) {
			inj, found = i, true
		}
	}
	if !found {
		return "", inj, false
	}
	if d, ok := deathNote(in.Logs, n); ok {
		if d.kind == "panicked" && strings.Contains(d.line, "runtime error") {
			return "", inj, false
		}
		if corruptionWords.MatchString(d.line) {
			return d.line, inj, true
		}
	}
	tail := strings.Split(logTail(in.Logs, n, 3), "\n")
	for i := len(tail) - 1; i >= 0; i-- {
		if strings.HasPrefix(tail[i], "panic: ") || strings.HasPrefix(tail[i], "goroutine ") {
			return "", inj, false // a panic's trace, its note not about corruption
		}
		if corruptionWords.MatchString(tail[i]) {
			return tail[i], inj, true
		}
	}
	return "", inj, false
}

// corruptionInfo is the crash checker's informational evidence for a node
// that stopped on a corruption it detected: the fault, what it changed,
// the node's words, and where its consequences are judged.
func corruptionInfo(n record.Node, line string, in record.Injection) string {
	return fmt.Sprintf("informational: node %s exited with status %d at %s on the corruption injected into it at %s (site %s, %s): it detected the bad bytes and refused them (%s), which is not a crash; the member stays down, and what that costs (data served, progress, recovery) is judged by the other checkers",
		n.Name, n.ExitCode, clock(n.ExitTime), clock(in.Time), in.SiteID, in.Error, line)
}
