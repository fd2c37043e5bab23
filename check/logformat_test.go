package check

import (
	"slices"
	"testing"

	"github.com/gofault/gofault/config"
)

// TestParseLogLineAs: a format given in the config parses its own lines
// only (and panics and fatal errors), so a line of no level in an
// unleveled log (Go's log package) is never made a warning by its words.
func TestParseLogLineAs(t *testing.T) {
	lines := map[string]string{
		"json":   `{"level":"warn","ts":"2026-12-06T05:12:00.1Z","caller":"x/y.go:3","msg":"slow"}`,
		"klog":   `W1206 05:12:00.123456   12345 server.go:88] slow`,
		"zap":    "2026-12-06T05:12:00.123Z\tWARN\tetcdserver/server.go:88\tslow",
		"logfmt": `time=2026-12-06T05:12:00Z level=warn msg="slow"`,
		"std":    `2026/12/06 05:12:00 error dialing peer, will retry`,
		"panic":  `panic: runtime error: index out of range`,
	}
	for _, tc := range []struct {
		format string
		want   []string // the lines that parse
	}{
		{LogAuto, []string{"json", "klog", "logfmt", "panic", "std", "zap"}},
		{LogJSON, []string{"json", "panic"}},
		{LogKlog, []string{"klog", "panic"}},
		{LogZapConsole, []string{"panic", "zap"}},
		{LogLogfmt, []string{"logfmt", "panic"}},
		{LogStd, []string{"panic"}},
	} {
		var got []string
		for name, raw := range lines {
			if _, ok := ParseLogLineAs(raw, tc.format); ok {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: parsed %v, want %v", tc.format, got, tc.want)
		}
	}
	if !slices.Equal(LogFormats, config.LogFormats) {
		t.Errorf("check.LogFormats %v and config.LogFormats %v differ", LogFormats, config.LogFormats)
	}
}
