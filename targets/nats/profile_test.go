package nats_test

import (
	"regexp"
	"testing"

	"github.com/gofault/gofault/config"
)

// TestLogIgnore: the profile's log_ignore patterns dismiss the lines they
// are written for, and not the ones that say the cluster is unwell.
func TestLogIgnore(t *testing.T) {
	cfg, err := config.Load("gofault.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var res []*regexp.Regexp
	for _, p := range cfg.Checkers.LogIgnore {
		res = append(res, regexp.MustCompile(p))
	}
	const at = "[7465] 2026/11/27 09:56:47.371436 [WRN] "
	for _, tc := range []struct {
		line    string
		ignored bool
	}{
		{at + "RAFT [fjFyEjc1 - _meta_] Falling behind in health check, commit 38 != applied 37", true},
		{at + "RAFT [fjFyEjc1 - _meta_] Health check OK, no longer falling behind", true},
		{at + "Metalayer blocking snapshot took 1.2s", true},
		// An applier that stays behind fails the health check.
		{at + `Healthcheck failed: "JetStream is not current with the meta leader"`, false},
		// A stream's or consumer's group is not the meta group.
		{at + "RAFT [fjFyEjc1 - S-R3F-x7Kp2] Falling behind in health check, commit 38 != applied 37", false},
		{at + "RAFT [fjFyEjc1 - _meta_] Falling behind in health check, commit 38 != applied 37, stalled", false},
	} {
		ignored := false
		for _, re := range res {
			ignored = ignored || re.MatchString(tc.line)
		}
		if ignored != tc.ignored {
			t.Errorf("%q: ignored %v, want %v", tc.line, ignored, tc.ignored)
		}
	}
}
