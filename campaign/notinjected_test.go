package campaign

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func TestNotInjected(t *testing.T) {
	cat := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, ID: "read-peers", Kind: catalog.KindError | catalog.KindCrash | catalog.KindCorrupt},
		{Index: 1, ID: "read-meta", Kind: catalog.KindError | catalog.KindCrash | catalog.KindCorrupt},
		{Index: 2, ID: "write-page", Kind: catalog.KindError | catalog.KindCrash | catalog.KindTorn},
		{Index: 3, ID: "dial", Kind: catalog.KindError | catalog.KindPartition},
	}}
	fault := func(reached []uint32, kinds ...catalog.Kind) *record.Trial {
		tr := &record.Trial{Policy: "random"}
		for _, k := range kinds {
			tr.Injections = append(tr.Injections, record.Injection{Kind: k})
		}
		for _, s := range reached {
			tr.Reached = append(tr.Reached, record.Reach{Site: s, Requests: 1})
		}
		return tr
	}
	baseline := &record.Trial{Policy: baselinePolicy, Reached: []record.Reach{{Site: 1}}}
	tests := []struct {
		name   string
		kinds  []catalog.Kind
		trials []*record.Trial
		want   []KindReach
		warn   []string // in the warning; none when want is empty
	}{
		{"every kind injected", []catalog.Kind{catalog.KindCorrupt, catalog.KindTorn},
			[]*record.Trial{fault(nil, catalog.KindCorrupt), fault(nil, catalog.KindTorn)}, nil, nil},
		{"nothing injected, nothing reached (a baseline's reach does not count)", []catalog.Kind{catalog.KindCorrupt, catalog.KindTorn},
			[]*record.Trial{baseline, fault(nil), fault([]uint32{3})},
			[]KindReach{{Kind: "corrupt", Sites: 2, SiteIDs: []string{"read-peers", "read-meta"}}, {Kind: "torn", Sites: 1, SiteIDs: []string{"write-page"}}},
			[]string{"no corrupt or torn fault injected in 2 fault trials", "corrupt: 2 sites can take it, none reached (read-peers, read-meta)", "torn: 1 site can take it, none reached"}},
		{"one kind reached but never struck", []catalog.Kind{catalog.KindError, catalog.KindCorrupt},
			[]*record.Trial{fault([]uint32{1, 3}, catalog.KindError)},
			[]KindReach{{Kind: "corrupt", Sites: 2, SiteIDs: []string{"read-peers", "read-meta"}, Reached: 1, ReachedIDs: []string{"read-meta"}}},
			[]string{"no corrupt fault injected in 1 fault trials", "1 reached (read-meta) but never struck"}},
		{"a kind struck at another site kind", []catalog.Kind{catalog.KindPowerLoss, catalog.KindDisconnect},
			[]*record.Trial{fault(nil)},
			[]KindReach{{Kind: "powerloss", Sites: 3, SiteIDs: []string{"read-peers", "read-meta", "write-page"}}, {Kind: "disconnect", Sites: 1, SiteIDs: []string{"dial"}}},
			[]string{"powerloss: 3 sites", "disconnect: 1 site "}},
		{"no fault trial", []catalog.Kind{catalog.KindCorrupt}, []*record.Trial{baseline}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := notInjected(tt.kinds, cat, tt.trials)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("notInjected = %+v, want %+v", got, tt.want)
			}
			n := 0
			for _, tr := range tt.trials {
				if tr.Policy != baselinePolicy {
					n++
				}
			}
			w := notInjectedWarning(got, n)
			if (w != "") != (len(tt.want) > 0) {
				t.Fatalf("warning %q for %+v", w, got)
			}
			for _, s := range tt.warn {
				if !strings.Contains(w, s) {
					t.Errorf("warning %q lacks %q", w, s)
				}
			}
		})
	}
}
