package check

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofault/gofault/record"
	"golang.org/x/sys/unix"
)

// Log levels, from least to most severe.
const (
	LevelDebug = "debug"
	LevelInfo  = "info"
	LevelWarn  = "warn"
	LevelError = "error"
	LevelPanic = "panic"
	LevelFatal = "fatal"
)

var severity = map[string]int{LevelDebug: 0, LevelInfo: 1, LevelWarn: 2, LevelError: 3, LevelPanic: 4, LevelFatal: 5}

// LogLine is one parsed log line.
type LogLine struct {
	Level string
	// Caller is the logging call site without its line number, e.g.
	// "etcdserver/server.go", when the log says.
	Caller string
	// Msg is the message; for unstructured lines the line without a
	// leading timestamp.
	Msg string
	// Err is the "error" field of a structured line.
	Err string
	// Fields are the field names of a structured line.
	Fields []string
	// Time is the line's time: a structured line's "ts" or "time" (RFC
	// 3339 or epoch seconds), a klog line's (this year, local time), a
	// plain line's leading timestamp; zero when the line has none.
	Time time.Time
	// Template is the normalized identity of the line: level, caller and
	// message with every variable part replaced.
	Template string
	// Raw is the line as logged.
	Raw string
}

// Log formats (config checkers.log_format): LogAuto detects each line's
// (ParseLogLine); the others parse only their format's lines, plus a Go
// panic or runtime fatal error, and skip the rest (ParseLogLineAs).
const (
	LogAuto       = "auto"
	LogJSON       = "json"        // zap, slog, logrus JSON
	LogKlog       = "klog"        // glog and klog: the first letter is the level
	LogZapConsole = "zap-console" // zap's console encoder
	LogLogfmt     = "logfmt"      // a level the format marks: level=warn, [WRN]
	LogStd        = "stdlog"      // Go's log package: no levels; only panics and fatal errors count
)

// LogFormats are the log formats ParseLogLineAs knows.
var LogFormats = []string{LogAuto, LogJSON, LogKlog, LogZapConsole, LogLogfmt, LogStd}

// ParseLogLineAs is ParseLogLine for a log of the given format (""
// is LogAuto): a line of another format has no level there (ok false),
// so a message's words never make a line of an unleveled format (LogStd)
// a warning.
func ParseLogLineAs(raw, format string) (LogLine, bool) {
	if format == "" || format == LogAuto {
		return ParseLogLine(raw)
	}
	s := strings.TrimSpace(raw)
	var yes bool
	switch format {
	case LogJSON:
		yes = strings.HasPrefix(s, "{")
	case LogKlog:
		yes = klogLine.MatchString(s)
	case LogZapConsole:
		yes = zapConsole.MatchString(s)
	case LogLogfmt:
		yes = markedLevel.MatchString(s) && !strings.HasPrefix(s, "{") && !klogLine.MatchString(s) && !zapConsole.MatchString(s)
	}
	if !yes && !strings.HasPrefix(s, "panic: ") && !strings.HasPrefix(s, "fatal error: ") {
		return LogLine{Raw: s}, false
	}
	return ParseLogLine(raw)
}

// ParseLogLine parses one line of a node log: a JSON object with "level"
// and "msg" (zap's "caller" and "ts", as etcd logs; slog's "time" and
// "source"; logrus's "time"), a Go panic or runtime fatal error, a glog or
// klog line (its first letter is the level: "I1206 05:12:00.123456 12
// file.go:88] …"), a zap console line (time, level, caller, message in
// tab-separated columns), or a plain line whose format marks its level
// (level=warn, [WRN]) or, failing that, with a level word (WARN, ERROR).
// A format's level decides, not the words of the message. ok is false for
// lines with no recognisable level (stack traces, banners).
func ParseLogLine(raw string) (l LogLine, ok bool) {
	s := strings.TrimSpace(raw)
	l.Raw = s
	switch {
	case s == "":
		return l, false
	case strings.HasPrefix(s, "{"):
		// zap ("ts", "caller"), slog ("time", "source"), logrus ("time").
		var j struct {
			Level  string `json:"level"`
			Msg    string `json:"msg"`
			Caller string `json:"caller"`
			Source *struct {
				File string `json:"file"`
				Line int    `json:"line"`
			} `json:"source"`
			Err    any `json:"error"`
			ErrAlt any `json:"err"`
			TS     any `json:"ts"`
			Time   any `json:"time"`
		}
		if json.Unmarshal([]byte(s), &j) != nil || j.Level == "" {
			return l, false
		}
		l.Level = normLevel(j.Level)
		l.Msg = j.Msg
		if e := cmp.Or(j.Err, j.ErrAlt); e != nil {
			l.Err = fmt.Sprint(e)
		}
		switch ts := cmp.Or(j.TS, j.Time).(type) {
		case string:
			l.Time, _ = time.Parse(time.RFC3339Nano, ts)
		case float64:
			l.Time = time.Unix(0, int64(ts*1e9))
		}
		if j.Caller == "" && j.Source != nil && j.Source.File != "" {
			j.Caller = path.Join(path.Base(path.Dir(j.Source.File)), path.Base(j.Source.File)) + ":" + strconv.Itoa(j.Source.Line)
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &fields) == nil {
			for k := range fields {
				l.Fields = append(l.Fields, k)
			}
			sort.Strings(l.Fields)
		}
		l.Caller = j.Caller
		if i := strings.LastIndexByte(l.Caller, ':'); i > 0 {
			l.Caller = l.Caller[:i]
		}
	case strings.HasPrefix(s, "panic: "):
		l.Level, l.Msg = LevelPanic, strings.TrimPrefix(s, "panic: ")
	case strings.HasPrefix(s, "fatal error: "):
		l.Level, l.Msg = LevelFatal, strings.TrimPrefix(s, "fatal error: ")
	case klogLine.MatchString(s):
		// glog and klog: the first letter is the level, whatever words
		// the message holds ("I1206 … failed to dial, will retry" is info).
		m := klogLine.FindStringSubmatch(s)
		l.Level = map[string]string{"I": LevelInfo, "W": LevelWarn, "E": LevelError, "F": LevelFatal}[m[1]]
		l.Caller, l.Msg = m[5], m[6]
		l.Time = klogTime(m[2], m[3])
	case zapConsole.MatchString(s):
		// zap's console encoder: time, level, caller, message, fields,
		// tab-separated.
		m := zapConsole.FindStringSubmatch(s)
		l.Level = normLevel(m[1])
		l.Caller, l.Msg = m[2], m[3]
		l.Time = plainTime(s)
	default:
		// A level the format marks (logfmt's level=, NATS's [INF], a
		// bracketed [WARN]) wins over a level word anywhere in the line:
		// "[INF] ... Read Error" is an info line.
		if m := markedLevel.FindStringSubmatch(s); m != nil {
			l.Level = normLevel(m[1] + m[2])
		} else if m := plainLevel.FindStringSubmatch(s); m != nil {
			l.Level = normLevel(m[1])
		} else {
			return l, false
		}
		l.Msg = strings.TrimSpace(timestampRE.ReplaceAllString(s, ""))
		l.Time = plainTime(s)
	}
	if l.Level == "" {
		return l, false
	}
	l.Template = l.Level + " " + l.Caller + " " + normalize(l.Msg)
	return l, true
}

// plainTime returns the time of a plain log line that starts with one
// (within its first 24 bytes, after a NATS pid or a logfmt "time="):
// hclog's "2026-11-24T21:32:38.750Z", Go log's "2026/11/24 21:32:38.750123"
// (local time), logfmt's time=…; the zero time when there is none, and the
// line is then always judged.
func plainTime(s string) time.Time {
	loc := timestampRE.FindStringIndex(s)
	if loc == nil || loc[0] > 24 {
		return time.Time{}
	}
	ts := strings.NewReplacer("/", "-", " ", "T", ",", ".").Replace(s[loc[0]:loc[1]])
	for _, layout := range []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, ts); err == nil {
			return t
		}
	}
	t, _ := time.ParseInLocation("2006-01-02T15:04:05.999999999", ts, time.Local)
	return t
}

// klogLine is a glog/klog line: "I1206 05:12:00.123456   12345
// server.go:88] msg" (level letter, month and day, time, thread ID,
// file:line), or the shorter one of glog forks that write neither the
// thread ID nor the bracket, as seaweedfs's weed/glog does:
// "I1206 10:32:34.979026 raft_server.go:253 msg".
var klogLine = regexp.MustCompile(`^([IWEF])(\d{4}) (\d{2}:\d{2}:\d{2}\.\d{6})\s+(?:\d+ )?([^\s:]+/)?([^\s:/]+\.go):\d+(?:\] ?| |$)(.*)$`)

// klogTime is the time of a klog line, which names no year and no zone:
// this year's, in local time (klog writes local time).
func klogTime(mmdd, hms string) time.Time {
	t, err := time.ParseInLocation("2006 0102 15:04:05.000000", strconv.Itoa(time.Now().Year())+" "+mmdd+" "+hms, time.Local)
	if err != nil {
		return time.Time{}
	}
	return t
}

// zapConsole is a line of zap's console encoder: "2026-12-06T05:12:00.123Z
// <tab>WARN<tab>etcdserver/server.go:88<tab>msg<tab>{fields}".
var zapConsole = regexp.MustCompile(`^\S+\t(?i)(debug|info|warn|warning|error|dpanic|panic|fatal)\t([^\t\s]+\.go):\d+\t([^\t]*)`)

var markedLevel = regexp.MustCompile(`(?i)\[(inf|wrn|err|ftl|dbg|trc|info|warn|warning|error|fatal|debug|trace|panic)\]|\blevel="?([a-z]+)`)

var plainLevel = regexp.MustCompile(`(?i)(?:^|[\s\[|(]|level=)(debug|info|warn|warning|error|fatal|panic|crit|critical)(?:$|[\s\]|):])`)

func normLevel(s string) string {
	switch strings.ToLower(s) {
	case "debug", "dbg", "trace", "trc":
		return LevelDebug
	case "info", "inf":
		return LevelInfo
	case "warn", "warning", "wrn":
		return LevelWarn
	case "error", "err":
		return LevelError
	case "panic", "dpanic":
		return LevelPanic
	case "fatal", "ftl", "crit", "critical":
		return LevelFatal
	}
	return ""
}

// Normalization patterns, applied in order.
var (
	timestampRE = regexp.MustCompile(`\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?`)
	normRE      = []struct {
		re   *regexp.Regexp
		with string
	}{
		{timestampRE, "<time>"},
		{regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`"), "<q>"},
		{regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s,;)\]}]+`), "<url>"},
		{regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<id>"},
		{regexp.MustCompile(`\[[0-9a-fA-F:]+\](?::\d+)?|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b|\blocalhost:\d+\b`), "<addr>"},
		{regexp.MustCompile(`(?:^|[\s=(:])(/[^\s,;:)]+)`), " <path>"},
		{regexp.MustCompile(`\b0x[0-9a-fA-F]+\b`), "<hex>"},
		{regexp.MustCompile(`\b[0-9a-fA-F]*[0-9][0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*\b|\b[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*[0-9][0-9a-fA-F]*\b`), "<hex>"},
		{regexp.MustCompile(`\b(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+\b`), "<n>"},
		{regexp.MustCompile(`[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?`), "<n>"},
		{regexp.MustCompile(`\s+`), " "},
	}
)

// normalize turns a log message into a template: timestamps, quoted values,
// URLs, IDs, addresses, paths, hex and numbers are replaced by placeholders.
func normalize(msg string) string {
	for i, r := range normRE {
		if i == mixedIDAt {
			msg = mixedID.ReplaceAllStringFunc(msg, mixedIDOnly)
		}
		msg = r.re.ReplaceAllString(msg, r.with)
	}
	return strings.TrimSpace(msg)
}

// mixedID matches a word that may be a generated ID in base 62: nats-server
// names its Raft nodes and groups so ("RAFT [fjFyEjc1 - S-R3F-pJgP3MAB]"),
// differently in every trial and on every server. Without it one message
// of two servers made two templates ("fjFyEjc<n>", "BXScrY<n>i"), and the
// generic-consequence rule never saw it follow faults at three sites.
var mixedID = regexp.MustCompile(`\b[A-Za-z0-9]{6,}\b`)

// mixedIDAt is the index in normRE before which mixedID applies: after
// timestamps, quoted values, URLs and addresses, before hex and numbers.
const mixedIDAt = 5

// mixedIDOnly replaces by "<id>" a word of upper- and lower-case letters
// and digits, or one of 8 or more letters and digits that switch between
// the two at least three times (nats-server's "mwe1k837": a base-62 name
// that drew no capital), and leaves any other word (English, hex, numbers,
// "sha256", "utf8") alone. Without the second, one shutdown warning of
// NATS v2.15.3 made a template per trial ("[C-R<n>F-mwe<n>k<n>]").
//
// A word of 8 or more upper- and lower-case letters alone is an ID when
// its case switches at least three times after its first letter with no
// four lower-case letters running together (nats-server's "mEptDXar"), or
// when fewer than a quarter of its letters are vowels ("UFNkjnzn"): not
// "JetStream", "LeaderTransfer" or "getHTTPResponseCode", whose words run
// on in lower case and read aloud. Without it one warning made a finding
// per Raft group in the session-19 hunt.
func mixedIDOnly(w string) string {
	var upper, lower, digit bool
	switches, wasDigit := 0, false
	caseSwitches, lowerRun, longestLower, vowels := 0, 0, 0, 0
	for i, c := range w {
		if strings.ContainsRune("aeiouyAEIOUY", c) {
			vowels++
		}
		isDigit := '0' <= c && c <= '9'
		isUpper := 'A' <= c && c <= 'Z'
		switch {
		case isUpper:
			upper = true
		case 'a' <= c && c <= 'z':
			lower = true
		case isDigit:
			digit = true
		}
		if i > 0 && isDigit != wasDigit {
			switches++
		}
		if i >= 2 && !isDigit && !wasDigit && isUpper != ('A' <= w[i-1] && w[i-1] <= 'Z') {
			caseSwitches++
		}
		if 'a' <= c && c <= 'z' {
			lowerRun++
			longestLower = max(longestLower, lowerRun)
		} else {
			lowerRun = 0
		}
		wasDigit = isDigit
	}
	lettersID := upper && lower && !digit && len(w) >= 8 && (caseSwitches >= 3 && longestLower < 4 || 4*vowels < len(w))
	if upper && lower && digit || len(w) >= 8 && switches >= 3 || lettersID {
		return "<id>"
	}
	return w
}

// Learn adds the warning-or-worse templates of a fault-free trial's node
// logs, read from logs (as Input.Logs) in the given format (as
// Input.LogFormat), and its start-up, to baseline b.
func Learn(b *record.LogBaseline, tr *record.Trial, logs fs.FS, format string) error {
	seen := map[string]bool{}
	for _, n := range tr.Nodes {
		err := scanLog(logs, n, format, func(l LogLine) {
			if severity[l.Level] >= severity[LevelWarn] {
				seen[l.Template] = true
			}
		})
		if err != nil {
			return fmt.Errorf("baseline: node %s: %w", n.Name, err)
		}
	}
	if b.Templates == nil {
		b.Templates = map[string]int{}
	}
	for t := range seen {
		b.Templates[t]++
	}
	b.Trials++
	if s, ok := startup(tr); ok {
		b.Startup = max(b.Startup, s)
	}
	return nil
}

// startup measures a trial's start-up: from the workload's first event to
// the first request that succeeded on the last of the trial's members to
// serve one; ok is false when a member served none.
func startup(tr *record.Trial) (time.Duration, bool) {
	first, _ := workloadSpan(tr)
	served := map[string]time.Time{}
	for _, e := range tr.Client {
		if e.Node == "" || !success(e) {
			continue
		}
		if t, ok := served[e.Node]; !ok || e.Time.Before(t) {
			served[e.Node] = e.Time
		}
	}
	var last time.Time
	for _, n := range tr.Nodes {
		t, ok := served[n.Name]
		if !ok {
			return 0, false
		}
		if t.After(last) {
			last = t
		}
	}
	if last.IsZero() {
		return 0, false
	}
	return last.Sub(first), true
}

// scanLog calls fn with each line of node n's log in logs that parses in
// format (ParseLogLineAs); a node without a log has none.
func scanLog(logs fs.FS, n record.Node, format string, fn func(LogLine)) error {
	f, err := openLog(logs, n)
	if err != nil {
		return fmt.Errorf("read log: %w", err)
	}
	if f == nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if l, ok := ParseLogLineAs(sc.Text(), format); ok {
			fn(l)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read log %s: %w", n.Log, err)
	}
	return nil
}

// logName is the name in Input.Logs of node n's log: the base name of its
// path (record.Node.Log), "" when it has none.
func logName(n record.Node) string {
	if n.Log == "" {
		return ""
	}
	return path.Base(filepath.ToSlash(n.Log))
}

// openLog opens node n's log in logs (logName); nil and no error for a
// node without a log.
func openLog(logs fs.FS, n record.Node) (fs.File, error) {
	name := logName(n)
	if name == "" {
		return nil, nil
	}
	if logs == nil {
		return nil, fmt.Errorf("no logs to open %s in (Input.Logs)", name)
	}
	return logs.Open(name)
}

// readLog returns the whole of node n's log in logs; nothing for a node
// without a log.
func readLog(logs fs.FS, n record.Node) ([]byte, error) {
	f, err := openLog(logs, n)
	if err != nil || f == nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// environmental are messages about the machine rather than the system's
// logic (slow disks, overloaded CPUs, clock drift, a loop that took long:
// nats-server's "Readloop processing time: 2.0s"): with parallel trials on
// a busy host they come and go, so they are never reported as new.
var environmental = regexp.MustCompile(`(?i)took too long|too long|slow|overloaded|on time|clock|leader is overloaded|heartbeat|processing time`)

// timingField names a structured field that reports how long something
// took: a line carrying one is a latency report (etcd's "request stats",
// "apply request took too long"), which depends on the machine's load.
var timingField = regexp.MustCompile(`(?i)^(took|time[ _-]?spent|elapsed|latency|duration|expected[ _-]duration)$`)

// aboutMachine reports whether l is about the machine rather than the
// system's logic.
func aboutMachine(l LogLine) bool {
	if environmental.MatchString(l.Msg) {
		return true
	}
	for _, f := range l.Fields {
		if timingField.MatchString(f) {
			return true
		}
	}
	return false
}

// sentinels are the standard library's error values that gofault's
// analysis injects by name (catalog.ErrorValue.Name), with the value whose
// text a log line echoing them contains.
var sentinels = map[string]error{
	"EOF":                 io.EOF,
	"ErrUnexpectedEOF":    io.ErrUnexpectedEOF,
	"ErrClosedPipe":       io.ErrClosedPipe,
	"ErrClosed":           net.ErrClosed,
	"deadline":            os.ErrDeadlineExceeded,
	"ErrDeadlineExceeded": os.ErrDeadlineExceeded,
	"ErrBadConn":          driver.ErrBadConn,
	"ErrConnDone":         sql.ErrConnDone,
	"DeadlineExceeded":    context.DeadlineExceeded,
	"Canceled":            context.Canceled,
}

// errnos maps the errno names of this platform ("EIO") to their values,
// from x/sys's own table of names.
var errnos = sync.OnceValue(func() map[string]syscall.Errno {
	m := map[string]syscall.Errno{}
	for e := syscall.Errno(1); e < 4096; e++ {
		if n := unix.ErrnoName(e); n != "" {
			m[n] = e
		}
	}
	return m
})

// injectedText returns the text of the error value named name, as its
// Error method writes it: an errno's ("EMFILE" → "too many open files",
// from the errno itself), or a standard sentinel's; "" for other names.
func injectedText(name string) string {
	if e, ok := errnos()[name]; ok {
		return e.Error()
	}
	if err, ok := sentinels[name]; ok {
		return err.Error()
	}
	return ""
}

// netErrors are the injected errors that break a connection between
// members: the peer at the other end sees a lost connection, as when a
// member is killed.
var netErrors = map[string]bool{
	"EPIPE": true, "ECONNRESET": true, "ECONNREFUSED": true, "ECONNABORTED": true, "ENOTCONN": true,
	"ETIMEDOUT": true, "EHOSTUNREACH": true, "ENETUNREACH": true, "ErrClosed": true,
	// A connection's deadline passing (analysis deadlineErr, "i/o
	// timeout"): the code that gets it drops the connection.
	"deadline": true,
}

// exhaustedWords are what targets log, in their own words, when the
// resource an injected errno says is exhausted runs out: nats-server's
// "JetStream out of resources, will be DISABLED" after an ENOSPC, a
// "disk full" or "quota" elsewhere — the consequence the errno announces,
// not an echo of its text.
var exhaustedWords = map[string]*regexp.Regexp{
	// A subsystem a target turns off when its disk is full, and then
	// reports off, follows too (nats-server: "JetStream out of resources,
	// will be DISABLED", then its health check "JetStream not enabled"),
	// and so does the leadership it hands over as it turns off
	// (nats-server: "JetStream initiating meta leader transfer").
	"ENOSPC": regexp.MustCompile(`(?i)no space|out of (disk |storage )?space|(disk|storage) (is )?full|out of (storage|resources)|insufficient (storage|resources)|quota|\bdisabled\b|not enabled|not writable|leader(ship)? transfer`),
	"EDQUOT": regexp.MustCompile(`(?i)quota|no space|out of (disk |storage )?space|out of (storage|resources)|insufficient (storage|resources)`),
	"EMFILE": regexp.MustCompile(`(?i)too many open files|file descriptors|out of resources`),
	"ENFILE": regexp.MustCompile(`(?i)too many open files|file table|file descriptors|out of resources`),
	"ENOMEM": regexp.MustCompile(`(?i)out of memory|cannot allocate|out of resources`),
}

// storageWords are what a node logs, in its own words, when a disk call
// failed and it did not quote the error: nats-server turns an EIO at its
// store's probe into "storage directory not readable", and a failed write
// into "Stream state encountered internal inconsistency on write".
var storageWords = regexp.MustCompile(`(?i)not (readable|writable)|\b(read|write) error|(failed|unable|could not) to (read|write|persist|sync|flush|store)|inconsisten(t|cy)[^.]* (on|after) (write|read)`)

// delayWords are what a node logs when something it waits for is late: a
// delay of seconds also costs a leader its leadership and fails health
// probes.
var delayWords = regexp.MustCompile(`(?i)deadline|timeout|timed out|lagging|waiting|retry|cancel|leader|elect|unavailable|health`)

// InjectedTexts returns the texts an injected error shows as, as errors'
// Error methods write them (record.Injection.Error of an error fault:
// "EIO" → "input/output error", "EIO"): what a log line, or a test's
// failure message, that echoes the error contains.
func InjectedTexts(err string) []string { return errorTexts(err) }

// errorTexts returns the strings that a log line echoing the injected error
// err would contain. err names an errno or sentinel ("EIO",
// "syscall.ECONNRESET", "io.ErrUnexpectedEOF") or quotes the error's text,
// possibly truncated ("\"open failed: …\"") and with format verbs.
func errorTexts(err string) []string {
	var out []string
	err = strings.TrimSpace(err)
	if err == "" {
		return nil
	}
	if !strings.ContainsAny(err, " \"'") {
		name := errorName(err)
		if t := injectedText(name); t != "" {
			out = append(out, t)
		} else if t := camelText(name); t != "" {
			out = append(out, t)
		}
		if len(name) >= 3 {
			out = append(out, name)
		}
		return out
	}
	text := strings.TrimSuffix(strings.TrimSuffix(strings.Trim(err, "\"`"), "…"), "...")
	text = strings.TrimSuffix(text, "\"")
	if i := strings.IndexByte(text, '%'); i >= 0 {
		text = text[:i] // the part before a format verb is verbatim
	}
	if text = strings.TrimSpace(text); len(text) >= 6 {
		out = append(out, text)
	}
	return out
}

// errorName returns the bare name of an injected error value: without its
// package ("syscall.EIO" → "EIO") and without the "(mkdir)" or "#2" that
// tells two values of one name at a site apart (analysis uniqueNames).
func errorName(err string) string {
	if i := strings.IndexByte(err, '('); i > 0 && strings.HasSuffix(err, ")") {
		err = err[:i]
	}
	if i := strings.LastIndexByte(err, '.'); i >= 0 {
		err = err[i+1:]
	}
	if i := strings.IndexByte(err, '#'); i > 0 {
		err = err[:i]
	}
	return err
}

// camelText guesses the text of a sentinel error named in Go's style,
// ErrTxClosed → "tx closed" (bolt), ErrLogNotFound → "log not found"
// (hashicorp/raft), from the words of its name; "" for names of fewer than
// two words, whose guess would match too much.
func camelText(name string) string {
	rest, ok := strings.CutPrefix(name, "Err")
	if !ok || rest == "" {
		return ""
	}
	var words []string
	start := 0
	for i := 1; i <= len(rest); i++ {
		// A word ends before an upper-case letter that follows a lower-case
		// one, or that starts a word after an acronym (DBNotOpen).
		if i == len(rest) || isUpper(rest[i]) && (!isUpper(rest[i-1]) || i+1 < len(rest) && !isUpper(rest[i+1])) {
			words = append(words, strings.ToLower(rest[start:i]))
			start = i
		}
	}
	if len(words) < 2 {
		return ""
	}
	return strings.Join(words, " ")
}

func isUpper(b byte) bool { return 'A' <= b && b <= 'Z' }

// connectionWords are what members log when a peer or a connection to it
// is lost, and when they then catch a member that fell behind up: a leader
// finds the entries it needs compacted away ("log not found" in
// hashicorp/raft, ErrCompacted in etcd) and sends a snapshot; a leader
// killed and back as a follower drops its uncommitted entries that conflict
// with the new leader's ("clearing log suffix"; hashicorp/raft first
// refuses the leader's append whose previous entry's term differs from its
// own, "previous log term mis-match: ours=2 remote=3", until the leader
// has walked back to where their logs agree); a follower restarted from
// a snapshot gets a commit index older than it and skips it
// (hashicorp/raft's "skipping application of old log"); a member shut
// down for a restart finds its own transport closed under a request it was
// reading ("failed to decode incoming command: error=\"transport
// shutdown\""); a member that voted before it lost power grants the same
// candidate's retried vote request again ("duplicate requestVote from").
var connectionWords = regexp.MustCompile(`(?i)peer|connection|unreachable|lost|\beof\b|refused|broken pipe|reset by|stream|dial|leader|elect|unavailable|reject|closed|timeout|timed out|snapshot|health|behind|lagging|compacted|log not found|log suffix|old log|log term mis-?match|transport shut ?down|duplicate request ?vote|conflict|contact`)

// leaderRole reports whether a recorded role is a leader's: "StateLeader"
// (etcd), "Leader" (hashicorp/raft).
func leaderRole(role string) bool {
	return role == "Leader" || strings.HasSuffix(role, ".Leader") || strings.HasSuffix(role, "StateLeader")
}

// partitionWords are what a member cut off from its peers, or its peers,
// log besides lost connections: it loses its quorum, steps down, campaigns
// in vain, and the others elect.
var partitionWords = regexp.MustCompile(`(?i)quorum|stepped down|step down|follower|candidate|campaign|vote|\bterm\b|inactive|not active|lagging|behind`)

// judgedWindow returns the period whose log lines the log checker judges:
// from the workload's first event, or the first injection if that is
// earlier, to the workload's last event. Lines before cannot be caused by a
// fault and are the cluster's start-up, whose warnings vary with timing
// (peers not up yet); lines after are its shutdown. Zero times mean the
// trial has no client events, and every line is judged.
func judgedWindow(tr *record.Trial) (from, to time.Time) {
	from, to = workloadSpan(tr)
	for _, in := range tr.Injections {
		if !from.IsZero() && in.Time.Before(from) {
			from = in.Time
		}
	}
	return from, to
}

// knownTemplates returns the templates b saw, each also as this
// gofault's normalize writes it: a baseline stored by an earlier gofault
// (a resumed or re-judged campaign) keeps the templates its normalize
// wrote, and a word normalize has since learned to read as an ID must not
// make its lines new.
func knownTemplates(b *record.LogBaseline) map[string]bool {
	out := make(map[string]bool, 2*len(b.Templates))
	for t, n := range b.Templates {
		if n <= 0 {
			continue
		}
		out[t] = true
		if level, rest, ok := strings.Cut(t, " "); ok {
			if caller, msg, ok := strings.Cut(rest, " "); ok {
				out[level+" "+caller+" "+normalize(msg)] = true
			}
		}
	}
	return out
}

// logSymptom is the symptom of a new log line: its level, caller and
// normalised message (its template, in words).
func logSymptom(l LogLine) string {
	where := ""
	if l.Caller != "" {
		where = " at " + l.Caller
	}
	return fmt.Sprintf("new %s log%s: %s", l.Level, where, normalize(l.Msg))
}

// Log is the log checker: it reports warning, error, panic and fatal lines
// whose template never appeared in the fault-free baseline, among the lines
// logged while the workload ran (see judgedWindow). A line that a rule of
// LogRules ties to one of the trial's faults (the injected error's text,
// the fault site's own logging, a delay's timeouts, the peers' view of a
// killed member), on the member the fault hit or its peers and within the
// fault's window, is the system handling the fault; so is a line about a
// slow or overloaded machine. Such lines are dismissed: they are at most
// informational, and the verdict lists them (record.Verdict.Dismissed) by
// rule, node and template.
//
// A line is placed in time by its own timestamp or, for a line without
// one (a stack trace's "panic:", a line a library printed bare), by the
// last timestamped line before it in the same log. A line that cannot be
// placed lies in no fault's window: only the machine and log-ignore rules
// can dismiss it.
type Log struct{}

// Name implements Checker.
func (Log) Name() string { return NameLog }

// newTemplate is one reported template: its first line and node, and how
// often it was logged.
type newTemplate struct {
	line  LogLine
	node  string
	count int
	nodes map[string]bool
	// lasting: a line of the template came after every fault's window
	// had closed (see record.Verdict.Lasting).
	lasting bool
	// early: every line of the template came before the trial's first
	// fault (see record.Verdict.BeforeFaults).
	early bool
}

// dismissed is one record.Dismissal being counted.
type dismissed struct {
	d    record.Dismissal
	line LogLine
}

// Check implements Checker.
func (Log) Check(_ context.Context, in *Input) record.Verdict {
	v := pass(NameLog)
	if in.Baseline == nil || in.Baseline.Trials == 0 {
		v.Unknown = true
		v.Symptom = "no fault-free baseline to judge logs against"
		return v
	}
	ignore, err := compileAll(in.LogIgnore)
	if err != nil {
		v.Unknown = true
		v.Symptom = "bad log ignore pattern"
		v.Evidence = []string{err.Error()}
		return v
	}
	downgraded, err := compileAll(in.LogDowngraded)
	if err != nil {
		v.Unknown = true
		v.Symptom = "bad log downgraded pattern"
		v.Evidence = []string{err.Error()}
		return v
	}
	bound := in.RecoveryBound
	if bound <= 0 {
		bound = DefaultRecoveryBound
	}
	known := knownTemplates(in.Baseline)
	faults := trialFaults(in.Trial, in.NetSites, bound)
	closed := windowsClosed(faults)
	first := firstInjection(in.Trial)
	from, to := judgedWindow(in.Trial)
	found := map[string]*newTemplate{}
	var order []string
	gone := map[string]*dismissed{} // by rule, node and template
	var goneOrder []string
	// note counts line l of node as dismissed by rule.
	note := func(rule, why, node string, l LogLine) {
		key := rule + "\x00" + node + "\x00" + l.Template
		if g, ok := gone[key]; ok {
			g.d.Count++
			return
		}
		gone[key] = &dismissed{d: record.Dismissal{Rule: rule, Node: node, Template: l.Template, Count: 1, Example: l.Raw, Why: why}, line: l}
		goneOrder = append(goneOrder, key)
	}
	// The new lines no rule dismissed while scanning wait for every
	// member's echoes (echo-aftermath) before they are reported.
	type candidate struct {
		l      LogLine
		node   string
		placed time.Time
	}
	var pending []candidate
	var echoes []echoed
	for _, n := range in.Trial.Nodes {
		var placed time.Time // the last timestamp seen in this log
		err := scanLog(in.Logs, n, in.LogFormat, func(l LogLine) {
			if !l.Time.IsZero() {
				placed = l.Time
			}
			if !l.Time.IsZero() && !from.IsZero() && (l.Time.Before(from) || l.Time.After(to)) {
				return
			}
			if severity[l.Level] < severity[LevelWarn] {
				if m := markedDowngraded(downgraded, l.Raw); m != "" {
					note(RuleDowngraded, "its program's mark "+strconv.Quote(m), n.Name, l)
				}
				return
			}
			if known[l.Template] {
				return
			}
			rule, why := "", ""
			for _, re := range ignore {
				if re.MatchString(l.Raw) {
					rule, why = RuleLogIgnore, "matches "+re.String()
					break
				}
			}
			if rule == "" {
				var by *fault
				rule, why, by = dismissBy(faults, l, n.Name, placed)
				if rule == RuleEchoError || rule == RuleResourceExhausted || rule == RuleStorageWords {
					for _, o := range quotedNames(l.Msg) {
						echoes = append(echoes, echoed{object: o, node: n.Name, f: by})
					}
				}
			}
			if rule == "" && aboutMachine(l) {
				rule, why = RuleMachine, "about a slow or overloaded machine"
			}
			if rule != "" {
				note(rule, why, n.Name, l)
				return
			}
			pending = append(pending, candidate{l, n.Name, placed})
		})
		if err != nil {
			v.Evidence = append(v.Evidence, fmt.Sprintf("node %s: %v", n.Name, err))
		}
	}
	for _, c := range pending {
		if why := aftermath(echoes, c.l, c.node, c.placed); why != "" {
			note(RuleEchoAftermath, why, c.node, c.l)
			continue
		}
		late := !closed.IsZero() && !c.placed.IsZero() && c.placed.After(closed)
		early := !first.IsZero() && !c.placed.IsZero() && c.placed.Before(first)
		if nt, ok := found[c.l.Template]; ok {
			nt.count++
			nt.nodes[c.node] = true
			nt.lasting = nt.lasting || late
			nt.early = nt.early && early
			continue
		}
		found[c.l.Template] = &newTemplate{line: c.l, node: c.node, count: 1, nodes: map[string]bool{c.node: true}, lasting: late, early: early}
		order = append(order, c.l.Template)
	}
	// Most severe first, then by template, so the symptom is stable.
	sort.SliceStable(order, func(i, j int) bool {
		a, b := found[order[i]], found[order[j]]
		if sa, sb := severity[a.line.Level], severity[b.line.Level]; sa != sb {
			return sa > sb
		}
		return order[i] < order[j]
	})
	sort.SliceStable(goneOrder, func(i, j int) bool {
		a, b := gone[goneOrder[i]].line, gone[goneOrder[j]].line
		if sa, sb := severity[a.Level], severity[b.Level]; sa != sb {
			return sa > sb
		}
		return goneOrder[i] < goneOrder[j]
	})
	nodes := map[string]bool{}
	for _, t := range order {
		nt := found[t]
		v.Failed = true
		for n := range nt.nodes {
			nodes[n] = true
		}
		v.Symptoms = append(v.Symptoms, logSymptom(nt.line))
		still := ""
		if nt.lasting {
			v.Lasting = append(v.Lasting, logSymptom(nt.line))
			still = ", still logged after every fault's window closed"
		}
		if nt.early {
			v.BeforeFaults = append(v.BeforeFaults, logSymptom(nt.line))
			still += ", every line before the first fault at " + clock(first)
		}
		v.Evidence = append(v.Evidence, fmt.Sprintf("new %s on %s (%d×%s): %s", nt.line.Level, strings.Join(sortedSet(nt.nodes), ","), nt.count, still, nt.line.Raw))
	}
	for _, k := range goneOrder {
		g := gone[k]
		v.Dismissed = append(v.Dismissed, g.d)
		if g.d.Rule == RuleDowngraded {
			v.Evidence = append(v.Evidence, fmt.Sprintf("listed, %s (%s): %s on %s (%d×): %s", g.d.Rule, g.d.Why, g.line.Level, g.d.Node, g.d.Count, g.d.Example))
			continue
		}
		v.Evidence = append(v.Evidence, fmt.Sprintf("informational, %s (%s): new %s on %s (%d×): %s", g.d.Rule, g.d.Why, g.line.Level, g.d.Node, g.d.Count, g.d.Example))
	}
	switch {
	case len(order) > 0:
		v.Symptom = logSymptom(found[order[0]].line)
		v.Nodes = sortedSet(nodes)
	case len(goneOrder) > 0 && gone[goneOrder[0]].d.Rule != RuleDowngraded:
		v.Symptom = "informational: " + logSymptom(gone[goneOrder[0]].line)
	}
	v.Evidence = capEvidence(v.Evidence)
	return v
}

// firstInjection is when tr's first fault was injected; zero without
// faults.
func firstInjection(tr *record.Trial) time.Time {
	var first time.Time
	for _, in := range tr.Injections {
		if !in.Time.IsZero() && (first.IsZero() || in.Time.Before(first)) {
			first = in.Time
		}
	}
	return first
}

// windowsClosed is when the last of faults' windows closes: a line logged
// after it is no passing reaction to any fault. Zero when there are no
// faults; far in the future when a window never closes (a member that
// never came back).
func windowsClosed(faults []fault) time.Time {
	var last time.Time
	for _, f := range faults {
		if f.to.After(last) {
			last = f.to
		}
	}
	return last
}

// markedDowngraded returns the text of line that matches one of the
// downgraded marks, or "".
func markedDowngraded(marks []*regexp.Regexp, line string) string {
	for _, re := range marks {
		if m := re.FindString(line); m != "" {
			return m
		}
	}
	return ""
}

// compileAll compiles every pattern of ps, or returns the first error.
func compileAll(ps []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range ps {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, re)
	}
	return out, nil
}
