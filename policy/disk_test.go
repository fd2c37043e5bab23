package policy

import (
	"reflect"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// diskCatalog has a file read that can be corrupted, a file write that can
// be torn and a read whose bytes no hook reaches.
func diskCatalog() *catalog.Catalog {
	c := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, ID: "snap.load#ReadFile.0", Kind: catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCorrupt, IO: "disk",
			Errors: []catalog.ErrorValue{{Name: "EIO"}}, FileRole: catalog.FileSnapshot},
		{Index: 1, ID: "wal.append#Write.0", Kind: catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindTorn, IO: "disk",
			Errors: []catalog.ErrorValue{{Name: "EIO"}}, FileRole: catalog.FileLog},
		{Index: 2, ID: "x.scan#Scan.0", Kind: catalog.KindDelay | catalog.KindCrash, IO: "disk"},
	}}
	c.Hash = c.ComputeHash()
	return c
}

func TestDiskFaultsOnlyWhereListedAndReachable(t *testing.T) {
	cat := diskCatalog()
	cases := []struct {
		name  string
		kinds []catalog.Kind
		files []string
		site  int
		want  []catalog.Kind // the disk kinds offered
	}{
		{"default kinds leave disk faults out", nil, nil, 0, nil},
		{"corrupt at a read", []catalog.Kind{catalog.KindCorrupt}, nil, 0, []catalog.Kind{catalog.KindCorrupt}},
		{"no corrupt at a write", []catalog.Kind{catalog.KindCorrupt}, nil, 1, nil},
		{"torn at a write", []catalog.Kind{catalog.KindCorrupt, catalog.KindTorn}, nil, 1, []catalog.Kind{catalog.KindTorn}},
		{"nothing where the bytes are out of reach", []catalog.Kind{catalog.KindCorrupt, catalog.KindTorn}, nil, 2, nil},
		{"rot where a write can tear", []catalog.Kind{catalog.KindRot}, nil, 1, []catalog.Kind{catalog.KindRot}},
		{"no rot at a read", []catalog.Kind{catalog.KindRot}, nil, 0, nil},
		{"a snapshot read among the roles asked", []catalog.Kind{catalog.KindCorrupt}, []string{catalog.FileSnapshot}, 0, []catalog.Kind{catalog.KindCorrupt}},
		{"a log write not among them", []catalog.Kind{catalog.KindTorn}, []string{catalog.FileSnapshot, catalog.FileMetadata}, 1, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := Env{Catalog: cat, Kinds: c.kinds, Files: c.files, Seed: 3}
			req := Request{Trial: 1, Node: "n2", Site: &cat.Sites[c.site], Occurrence: 4}
			var got []catalog.Kind
			for _, f := range env.faultsAt(&req) {
				if f.Kind == catalog.KindCorrupt || f.Kind == catalog.KindTorn || f.Kind == catalog.KindRot {
					got = append(got, f.Kind)
					if f.Pick == 0 {
						t.Errorf("%s fault without a pick", f.Kind)
					}
				}
			}
			if len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) {
				t.Fatalf("disk faults %v, want %v", got, c.want)
			}
		})
	}
}

func TestDiskPickIsSeededAndVaries(t *testing.T) {
	cat := diskCatalog()
	pick := func(seed int64, trial, occ int) uint64 {
		env := Env{Catalog: cat, Kinds: []catalog.Kind{catalog.KindCorrupt}, Seed: seed}
		return env.faultsAt(&Request{Trial: trial, Node: "n1", Site: &cat.Sites[0], Occurrence: occ})[0].Pick
	}
	if a, b := pick(1, 2, 3), pick(1, 2, 3); a != b {
		t.Fatal("the same seed, trial and request gave two picks")
	}
	if pick(1, 2, 3) == pick(2, 2, 3) || pick(1, 2, 3) == pick(1, 3, 3) || pick(1, 2, 3) == pick(1, 2, 4) {
		t.Fatal("another seed, trial or occurrence gave the same pick")
	}
}

func TestDiskFaultReplaysItsPick(t *testing.T) {
	cat := diskCatalog()
	cases := []struct {
		name    string
		inj     record.Injection
		want    Fault
		missing bool
	}{
		{"corrupt with detail", record.Injection{SiteID: cat.Sites[0].ID, Kind: catalog.KindCorrupt,
			Error: PickText(0xbeef) + ": bit 3 of byte 17 of a 900-byte read flipped"}, Fault{Kind: catalog.KindCorrupt, Pick: 0xbeef}, false},
		{"torn", record.Injection{SiteID: cat.Sites[1].ID, Kind: catalog.KindTorn, Error: PickText(7)}, Fault{Kind: catalog.KindTorn, Pick: 7}, false},
		{"rot", record.Injection{SiteID: cat.Sites[1].ID, Kind: catalog.KindRot, Error: PickText(7) + ": bit 0 of byte 1 of a 10-byte write flipped on the disk"}, Fault{Kind: catalog.KindRot, Pick: 7}, false},
		{"no pick recorded", record.Injection{SiteID: cat.Sites[1].ID, Kind: catalog.KindTorn}, Fault{}, true},
		{"site lost the kind", record.Injection{SiteID: cat.Sites[2].ID, Kind: catalog.KindCorrupt, Error: PickText(1)}, Fault{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReplay(cat, []record.Injection{c.inj})
			if c.missing {
				if len(r.Missing()) != 1 {
					t.Fatalf("Missing() = %v, want the injection", r.Missing())
				}
				return
			}
			if len(r.want) != 1 || !reflect.DeepEqual(r.want[0].fault, c.want) {
				t.Fatalf("replayed %+v, want %+v (missing %v)", r.want, c.want, r.Missing())
			}
		})
	}
}
