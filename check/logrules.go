package check

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// Names of the log checker's rules: why it dismissed a new log line
// (record.Dismissal.Rule). They are stable: reports and users' audits
// refer to them.
const (
	RuleEchoError         = "echo-error"
	RuleEchoAftermath     = "echo-aftermath"
	RuleOwnShutdown       = "own-shutdown"
	RuleStorageWords      = "storage-words"
	RuleResourceExhausted = "resource-exhausted"
	RuleFaultSite         = "fault-site"
	RuleCorruptionWords   = "corruption-words"
	RuleDelayWords        = "delay-words"
	RuleConnectionWords   = "connection-words"
	RulePartitionWords    = "partition-words"
	RuleLeaderError       = "leader-error"
	RuleMachine           = "machine"
	RuleLogIgnore         = "log-ignore"
	RuleDowngraded        = "downgraded"
)

// LogRule describes one rule by which the log checker dismisses a new
// warning-or-worse line as the expected consequence of a fault, or as
// not about the system at all.
type LogRule struct {
	Name string `json:"name"`
	// Dismisses says which lines the rule dismisses.
	Dismisses string `json:"dismisses"`
	// Scope says on which members and when it applies.
	Scope string `json:"scope"`
}

// LogRules are the log checker's rules, in the order it tries them. A
// line no rule dismisses is reported.
var LogRules = []LogRule{
	{RuleEchoError, "lines containing the injected error's text (\"input/output error\", \"EIO\")",
		"the node the error was injected into and, for a system error no network call returns (EIO, ENOSPC at a disk call: a peer can only have its text from that node, which passed it on in a reply), its peers, by that text alone; from the injection to RecoveryBound after it"},
	{RuleResourceExhausted, "after an injected ENOSPC, EDQUOT, EMFILE, ENFILE or ENOMEM, lines saying in the target's words that the resource ran out or the subsystem needing it is off",
		"the node the error was injected into, from the injection to the end of the trial (a target keeps a subsystem it turned off off)"},
	{RuleFaultSite, "lines logged from a file of the injection's stack (its first four frames)",
		"the node the fault hit, in the fault's window"},
	{RuleStorageWords, "after an error injected at a disk call (a system error no network call returns: EIO, ENOSPC, EMFILE …), lines saying in the target's own words that its storage failed, where it did not quote the error: not readable, not writable, a read or write error, failed to write or persist, an internal inconsistency on write (nats-server: \"Error creating filestore WAL: storage directory not readable\", \"Stream state encountered internal inconsistency on write\")",
		"the node the error was injected into, in the fault's window"},
	{RuleCorruptionWords, "after a corrupt fault or a torn write, lines saying the data read is bad: corrupt, checksum, crc, hash or digest mismatch, bad magic, integrity (the target detected the altered bytes, or the torn record at its restart)",
		"the node whose read was corrupted or whose write was torn, in the fault's window (a torn write's: to the node's restart plus the recovery bound)"},
	{RuleDelayWords, "after a delay or a partition, lines about waiting: deadline, timeout, retry, cancel, leader, elect, unavailable, health",
		"the node the fault hit, in the fault's window"},
	{RuleConnectionWords, "after a kill, a restart, an exit, a delay, a partition or a network error, lines about a lost peer or connection and the catch-up that follows (peer, connection, closed, reject, snapshot, compacted, conflict, …)",
		"the node the fault hit and, by time only, its peers (a peer's line that names the hit member is noted so), in the fault's window"},
	{RulePartitionWords, "after a partition or disconnect, lines about the election that follows (quorum, step down, candidate, vote, term, …)",
		"every member (an election involves all), in the fault's window"},
	{RuleLeaderError, "after an error injected into the leader, lines about the election that follows (the partition words)",
		"every member, from the injection to RecoveryBound after it"},
	{RuleOwnShutdown, "lines a member logs during its own clean shutdown, from a reboot's signal until it is started again (nats-server: a Raft group that wins an election as JetStream shuts down cannot subscribe, \"system account not setup\"): the judged window leaves out every member's shutdown at the trial's end, a reboot's is the same shutdown earlier",
		"the rebooted node, from the reboot to its restart; not its peers, not its new process, not after a crash or a stop (no shutdown runs)"},
	{RuleMachine, "lines about a slow or overloaded machine (took too long, slow, clock, heartbeat) or carrying a latency field (took, duration)",
		"every member, the whole trial: with parallel trials on a busy host they come and go, fault or not"},
	{RuleEchoAftermath, "lines naming an object (a quoted name such as '$G > S2', or one inside it such as '$G > S2 > c-n3') that a line dismissed as echo-error, resource-exhausted or storage-words named: what the target did next about the thing the injected error failed (a stream whose store could not be created is rejected, looked up, removed; its consumers cannot find it)",
		"the node the echo was logged on and, naming the object, its peers (a meta leader learns of the failure), in the window of the fault the echo was tied to; tried last, over every member's log"},
	{RuleLogIgnore, "lines matching one of the target's log_ignore patterns",
		"every member, the whole trial"},
	{RuleDowngraded, "lines the target's own program logged below warning in place of an error because it knew their cause, marked so (a log_downgraded pattern): listed, never reported (the program scopes them, not gofault)",
		"every member, the whole trial, whether or not the baseline saw them"},
}

// fault is one fault of a trial as the log rules see it: the members it
// hit, the window in which its consequences are expected, and what it
// makes members log.
type fault struct {
	desc string
	hit  []string
	// from and to bound the fault's window: from its start to its end
	// (a delay's or a partition's length, a killed node's restart) plus
	// the recovery bound.
	from, to time.Time
	// exhaustedTo ends the window of resource-exhausted.
	exhaustedTo time.Time
	// shutdownTo ends a reboot's own shutdown (own-shutdown): the node's
	// restart; zero for the other kinds.
	shutdownTo time.Time
	texts      []string // injected error texts (echo-error)
	// peerTexts are the texts a peer's line may echo (echo-error on a
	// peer): the system error text of an injected errno that no network
	// call returns, at a site that is no network call.
	peerTexts []string
	// disk: an error injected at a disk call (storage-words).
	disk      bool
	exhausted []string // injected errnos that say a resource ran out
	callers   []string // files of the injection's stack (fault-site)
	delay     bool     // delay-words
	connLost  bool     // connection-words
	cut       bool     // partition-words
	leaderErr bool     // leader-error
	corrupt   bool     // corruption-words
}

// trialFaults returns the faults of tr for the log rules: its injections,
// and node exits or restarts that no injection explains. bound is the
// recovery bound added to each window.
func trialFaults(tr *record.Trial, netSites map[string]bool, bound time.Duration) []fault {
	end := tr.End
	if end.IsZero() {
		end = time.Unix(1<<40, 0) // unknown: never
	}
	var out []fault
	killedBy := map[string]bool{} // nodes a kill injection explains
	for _, in := range tr.Injections {
		f := fault{
			desc:        fmt.Sprintf("%s of %s at +%s", in.Kind, in.Node, in.Time.Sub(tr.Start).Round(time.Millisecond)),
			hit:         []string{in.Node},
			from:        in.Time,
			to:          in.Time.Add(bound),
			exhaustedTo: end,
		}
		switch in.Kind {
		case catalog.KindDelay:
			// A delay of seconds outlasts the peers' I/O timeouts: they
			// drop the connection and catch the member up later. A slowed
			// call with a known peer hits that peer too (check.hits).
			f.delay, f.connLost = true, true
			f.to = in.Time.Add(in.Delay + bound)
			if in.Peer != "" {
				f.hit = append(f.hit, in.Peer)
			}
		case catalog.KindCorrupt:
			f.corrupt = true
		case catalog.KindCrash, catalog.KindPowerLoss, catalog.KindReboot, catalog.KindTorn, catalog.KindCrashAfter, catalog.KindPowerLossAfter, catalog.KindStop, catalog.KindRot:
			// A reboot is a clean shutdown, but its peers lose the
			// member's connections all the same. A torn or rotten
			// write's node finds the bad record when it restarts.
			f.connLost = true
			f.corrupt = in.Kind == catalog.KindTorn || in.Kind == catalog.KindRot
			back := backAt(tr, in.Node, in.Time, end)
			f.to = back.Add(bound)
			if in.Kind == catalog.KindReboot {
				f.shutdownTo = back
			}
			killedBy[in.Node] = true
		case catalog.KindPartition, catalog.KindDisconnect, catalog.KindOneWay, catalog.KindSplit, catalog.KindLeaderCut, catalog.KindPause:
			// A paused member is cut off as a partitioned one is, and
			// on waking finds its connections timed out. Peers lose the cut member's connections and it theirs, its
			// stalled I/O is slow, and the members elect (a disconnect or
			// a one-way cut: the two members, of each other; a split:
			// every member, of the other side).
			f.delay, f.connLost, f.cut = true, true, true
			f.to = in.Time.Add(in.Delay + bound)
			switch {
			case in.Kind == catalog.KindSplit:
				var names []string
				for _, n := range tr.Nodes {
					names = append(names, n.Name)
				}
				struck, rest := in.SplitSides(names)
				f.hit = append(struck, rest...)
				f.desc = fmt.Sprintf("split of %s from %s at +%s", strings.Join(struck, ","), strings.Join(rest, ","), in.Time.Sub(tr.Start).Round(time.Millisecond))
			case in.Peer != "":
				f.hit = append(f.hit, in.Peer)
				f.desc += in.CutPeers(nil)
			}
		case catalog.KindError:
			f.desc = fmt.Sprintf("%s %s into %s at +%s", in.Kind, in.Error, in.Node, in.Time.Sub(tr.Start).Round(time.Millisecond))
			f.texts = errorTexts(in.Error)
			if netErrors[errorName(in.Error)] || netSites[in.SiteID] {
				f.connLost = true
			} else if t := injectedText(errorName(in.Error)); t != "" {
				// A peer that logs "input/output error" got it from this
				// node: a reply that carried the error (NATS's stream
				// leader answering its followers, raft's RPC errors).
				f.peerTexts = []string{t}
				f.disk = true
			}
			if exhaustedWords[errorName(in.Error)] != nil {
				f.exhausted = append(f.exhausted, errorName(in.Error))
			}
			f.leaderErr = leaderRole(in.Role)
		}
		for i, fr := range in.Stack {
			if i >= 4 {
				break
			}
			if fr.File != "" {
				f.callers = append(f.callers, fr.File)
			}
		}
		out = append(out, f)
	}
	for _, n := range tr.Nodes {
		// A node gone for a reason no injection names (it exited on an
		// injected error, or was restarted) makes its peers log about the
		// lost peer until it is back.
		switch {
		case n.Exited && !n.ExitTime.IsZero():
			out = append(out, fault{
				desc: fmt.Sprintf("exit of %s at +%s", n.Name, n.ExitTime.Sub(tr.Start).Round(time.Millisecond)),
				hit:  []string{n.Name}, from: n.ExitTime, to: backAt(tr, n.Name, n.ExitTime, end).Add(bound), connLost: true,
			})
		case (n.Killed || n.Restarts > 0 || n.Exited) && !killedBy[n.Name]:
			// When it went is unknown: from the trial's start to its
			// last restart.
			back := end
			if len(n.Restarted) > 0 {
				back = n.Restarted[len(n.Restarted)-1]
			}
			out = append(out, fault{
				desc: fmt.Sprintf("restart of %s (time unknown)", n.Name),
				hit:  []string{n.Name}, from: tr.Start, to: back.Add(bound), connLost: true,
			})
		}
	}
	return out
}

// backAt returns when node was started again after it went down at t:
// its first recorded restart after t; end when it never came back; t plus
// the runner's restart delay for a record without restart times.
func backAt(tr *record.Trial, node string, t, end time.Time) time.Time {
	for _, n := range tr.Nodes {
		if n.Name == node && !slices.ContainsFunc(n.Restarted, t.Before) && (n.Restarts == 0 || len(n.Restarted) > 0) {
			return end // it never came back after t
		}
	}
	return restartOf(tr, node, t)
}

// on reports whether node is one of the members f hit.
func (f *fault) on(node string) bool {
	for _, h := range f.hit {
		if h == node {
			return true
		}
	}
	return false
}

// within reports whether at lies in f's window; a line with no time lies
// in none. A log's timestamps are often coarser than the fault's
// (hashicorp/raft's and most text logs print milliseconds, the controller
// records nanoseconds): a line stamped .714 may follow a fault at
// .714543932, so the window opens at from truncated to the line's own
// precision (see precision).
func within(at, from, to time.Time) bool {
	return !at.IsZero() && !at.Before(from.Truncate(precision(at))) && !at.After(to)
}

// precision is the unit a timestamp was printed in, judged by its
// trailing zeros: a second, a millisecond, a microsecond or a nanosecond.
// (One in a thousand nanosecond stamps looks like a microsecond one,
// which only widens its window by under a microsecond.)
func precision(t time.Time) time.Duration {
	switch ns := t.Nanosecond(); {
	case ns == 0:
		return time.Second
	case ns%int(time.Millisecond) == 0:
		return time.Millisecond
	case ns%int(time.Microsecond) == 0:
		return time.Microsecond
	}
	return time.Nanosecond
}

// placement says where a line stands to f: on a hit member, or on a peer
// and whether it names a hit member.
func (f *fault) placement(l LogLine, node string) string {
	if f.on(node) {
		return "on " + node
	}
	for _, h := range f.hit {
		if mentions(l.Raw, h) {
			return "on peer " + node + ", naming " + h
		}
	}
	return "on peer " + node + ", by time"
}

// dismiss returns the rule that dismisses line l, logged on node and
// placed at at (zero when it cannot be placed), as the consequence of one
// of faults, and what it tied the line to; "" when none does. The rules
// are tried in LogRules order, each over every fault (echo-aftermath is
// not one of them: it needs every member's echoes, see aftermath).
func dismiss(faults []fault, l LogLine, node string, at time.Time) (rule, why string) {
	rule, why, _ = dismissBy(faults, l, node, at)
	return rule, why
}

// dismissBy is dismiss that also returns the fault the rule tied the line
// to (nil when none).
func dismissBy(faults []fault, l LogLine, node string, at time.Time) (rule, why string, by *fault) {
	words := func(re *regexp.Regexp) bool { return re.MatchString(l.Msg) || re.MatchString(l.Err) }
	for _, r := range LogRules {
		for i := range faults {
			f := &faults[i]
			inWindow := within(at, f.from, f.to)
			switch r.Name {
			case RuleEchoError:
				if !inWindow {
					continue
				}
				if f.on(node) {
					for _, t := range f.texts {
						if strings.Contains(l.Raw, t) {
							return r.Name, fmt.Sprintf("echoes the injected error %q: %s, on %s", t, f.desc, node), f
						}
					}
					continue
				}
				for _, t := range f.peerTexts {
					if strings.Contains(l.Raw, t) {
						return r.Name, fmt.Sprintf("echoes the injected error %q: %s, on peer %s (it can only have the text from %s)", t, f.desc, node, strings.Join(f.hit, ",")), f
					}
				}
			case RuleOwnShutdown:
				if !f.shutdownTo.IsZero() && f.on(node) && within(at, f.from, f.shutdownTo) {
					return r.Name, fmt.Sprintf("logged while %s shut down cleanly: %s, restarted %s later", node, f.desc, f.shutdownTo.Sub(f.from).Round(time.Millisecond)), f
				}
			case RuleResourceExhausted:
				if !f.on(node) || !within(at, f.from, f.exhaustedTo) {
					continue
				}
				for _, n := range f.exhausted {
					if exhaustedWords[n].MatchString(l.Raw) {
						return r.Name, fmt.Sprintf("%s ran a resource out: %s, on %s", n, f.desc, node), f
					}
				}
			case RuleFaultSite:
				if !f.on(node) || !inWindow || l.Caller == "" {
					continue
				}
				for _, c := range f.callers {
					if strings.HasSuffix(c, "/"+l.Caller) || path.Base(c) == l.Caller {
						return r.Name, fmt.Sprintf("logged at the fault site %s: %s, on %s", l.Caller, f.desc, node), f
					}
				}
			case RuleStorageWords:
				if f.disk && f.on(node) && inWindow && words(storageWords) {
					return r.Name, f.desc + ", on " + node, f
				}
			case RuleCorruptionWords:
				if f.corrupt && f.on(node) && inWindow && words(corruptionWords) {
					return r.Name, f.desc + ", on " + node, f
				}
			case RuleDelayWords:
				if f.delay && f.on(node) && inWindow && words(delayWords) {
					return r.Name, f.desc + ", on " + node, f
				}
			case RuleConnectionWords:
				if f.connLost && inWindow && words(connectionWords) {
					return r.Name, f.desc + ", " + f.placement(l, node), f
				}
			case RulePartitionWords:
				if f.cut && inWindow && words(partitionWords) {
					return r.Name, f.desc + ", " + f.placement(l, node), f
				}
			case RuleLeaderError:
				if f.leaderErr && inWindow && words(partitionWords) {
					return r.Name, f.desc + " (a leader's, a new election), " + f.placement(l, node), f
				}
			}
		}
	}
	return "", "", nil
}

// echoed is an object a line dismissed as echo-error (or
// resource-exhausted or storage-words: the target's own words for the
// injected error) named: where and while its aftermath is expected.
type echoed struct {
	object, node string
	f            *fault
}

// quotedNames match a name a log line quotes in single ('A > B') or
// double quotes ("c-n3"), each quote outside a word (not an apostrophe).
var quotedNamesRe = []*regexp.Regexp{
	regexp.MustCompile(`(?:^|[^\w'])'([^'\n]{3,100})'(?:$|[^\w'])`),
	regexp.MustCompile(`(?:^|[^\w"])"([^"\n]{3,100})"(?:$|[^\w"])`),
}

// quotedNames returns the names a line's message (LogLine.Msg: not a
// structured line's other fields, whose quoted values are times and
// levels) quotes, without the ones that are messages or paths (a ": "
// inside, a leading "/"), which name no object.
func quotedNames(msg string) []string {
	var out []string
	for _, re := range quotedNamesRe {
		for _, m := range re.FindAllStringSubmatch(msg, -1) {
			n := m[1]
			if strings.TrimSpace(n) == "" || strings.Contains(n, ": ") || strings.HasPrefix(n, "/") {
				continue
			}
			out = append(out, n)
		}
	}
	return out
}

// inside reports whether name is object or a name inside it: the object
// followed by a separator (" ", ">", "/", ".", ":").
func inside(name, object string) bool {
	if name == object {
		return true
	}
	return strings.HasPrefix(name, object) && strings.ContainsRune(" >/.:", rune(name[len(object)]))
}

// aftermath returns why line l, logged on node and placed at at, is the
// aftermath of one of echoes (the object it names, the echo's node, the
// fault), or "" when it is not.
func aftermath(echoes []echoed, l LogLine, node string, at time.Time) string {
	if at.IsZero() {
		return ""
	}
	for _, name := range quotedNames(l.Msg) {
		for _, e := range echoes {
			if !inside(name, e.object) || !within(at, e.f.from, e.f.to) {
				continue
			}
			where := "on " + node
			if node != e.node {
				where = "on peer " + node
			}
			return fmt.Sprintf("names %q, which %s's line tied to the injected error named: %s, %s", name, e.node, e.f.desc, where)
		}
	}
	return ""
}

// mentions reports whether s contains name as a word of its own: "n2"
// in "server-id=n2" or "{Voter n2 …}", not in "n21".
func mentions(s, name string) bool {
	if name == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(s[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		if (j == 0 || !isWordByte(s[j-1])) && (end == len(s) || !isWordByte(s[end])) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}
