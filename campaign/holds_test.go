package campaign

import (
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// TestCheckHolds: a hold until a site ("site=S") that no site of the
// catalog contains is refused at the campaign's start, naming the nearest
// site IDs, and so is a hold until a member fell behind ("behind=N") when
// no observation point observes a commit index; the other conditions, a
// site that is there and a commit index observed pass.
func TestCheckHolds(t *testing.T) {
	cat := &catalog.Catalog{Sites: []catalog.Site{
		{ID: "m/server.(*Node).writeSnapshot:os.Rename#0"},
		{ID: "m/server.(*Node).writeSnapshot:(*os.File).Close#0"},
		{ID: "m/server.(*Node).appendEntries:(*os.File).Sync#0"},
		{ID: "m/transport.(*Conn).Send:(*net.TCPConn).Write#0"},
	}}
	for _, tc := range []struct {
		name  string
		holds []string
		want  string // a substring of the error; "" none
	}{
		{"no site condition", []string{"leader", "requests=64"}, ""},
		{"a site there", []string{"leader", "site=writeSnapshot:os.Rename"}, ""},
		{"a site not there", []string{"leader", "site=SaveSnapshot"},
			`faults.partition.hold[1]: "site=SaveSnapshot": no site's stable ID contains "SaveSnapshot", so a cut held until it would always last its cap; nearest sites: m/server.(*Node).writeSnapshot:os.Rename#0, m/server.(*Node).writeSnapshot:(*os.File).Close#0,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkHolds("faults.partition.hold", "cut", tc.holds, cat)
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("checkHolds = %v, want %q", err, tc.want)
			}
		})
	}
	// "behind=N" needs an observation point that observes a commit index.
	if err := checkHolds("faults.partition.hold", "cut", []string{"leader", "behind=20"}, cat); err == nil || !strings.Contains(err.Error(), `faults.partition.hold[1]: "behind=20": no observation point of the catalog observes a commit index`) {
		t.Errorf("checkHolds of behind=20 without observation points = %v", err)
	}
	cat.ObservePoints = []catalog.ObservePoint{{ID: "observe:m/server.(*Node).step", Vars: []catalog.ObserveVar{{Name: "msg.Term"}, {Name: "msg.LeaderCommitIndex"}}}}
	if err := checkHolds("faults.delay_hold", "delay", []string{"behind=20"}, cat); err != nil {
		t.Errorf("checkHolds of behind=20 with msg.LeaderCommitIndex observed = %v", err)
	}
	want := `faults.delay_hold[0]: "site=SaveSnapshot": no site's stable ID contains "SaveSnapshot", so a delay held until it would always last its cap`
	if err := checkHolds("faults.delay_hold", "delay", []string{"site=SaveSnapshot"}, cat); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("checkHolds of a held delay = %v, want %q", err, want)
	}
}
