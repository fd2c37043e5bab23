package controller

import (
	"strings"
	"testing"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
)

func diskTestCatalog() *catalog.Catalog {
	c := &catalog.Catalog{Sites: []catalog.Site{
		{Index: 0, ID: "p.load#os.ReadFile.0", Kind: catalog.KindDelay | catalog.KindCrash | catalog.KindCorrupt, IO: "disk"},
		{Index: 1, ID: "p.append#(*os.File).Write.0", Kind: catalog.KindDelay | catalog.KindCrash | catalog.KindTorn, IO: "disk"},
	}}
	c.Hash = c.ComputeHash()
	return c
}

func TestSessionDiskFaults(t *testing.T) {
	crash := func(string) {}
	cases := []struct {
		name   string
		site   uint32
		fault  policy.Fault
		spec   TrialSpec
		act    wire.Action
		events []wire.Event
		detail string // in the injection's Error after the events
		kill   bool   // the event kills the node
	}{
		{"corrupt a read: a bit", 0, policy.Fault{Kind: catalog.KindCorrupt, Pick: 0x10}, TrialSpec{}, wire.ActCorrupt,
			[]wire.Event{{Kind: wire.EvDisk, A: 0, B: 900, C: 17, D: 4 | 1<<8, Data: []byte("/d/snapshot.json")}},
			"pick 0x10: bit 3 of byte 17 of a 900-byte read of /d/snapshot.json flipped", false},
		{"corrupt a read: a sector", 0, policy.Fault{Kind: catalog.KindCorrupt, Pick: 3}, TrialSpec{}, wire.ActCorrupt,
			[]wire.Event{{Kind: wire.EvDisk, A: 0, B: 2048, C: 512, D: 1 << 8}}, "pick 0x3: sector at byte 512 of a 2048-byte read changed", false},
		{"corrupt armed by an empty read, then a bit of the third read", 0, policy.Fault{Kind: catalog.KindCorrupt, Pick: 0x10}, TrialSpec{}, wire.ActCorrupt,
			[]wire.Event{{Kind: wire.EvDisk, A: 0, Data: []byte("/d/peers.json")}, {Kind: wire.EvDisk, A: 0, B: 900, C: 17, D: 4 | 3<<8, Data: []byte("/d/peers.json")}},
			"pick 0x10: nothing read of /d/peers.json, armed for the next read at the site: bit 3 of byte 17 of a 900-byte read of /d/peers.json flipped (the site's read 3 since the fault)", false},
		{"corrupt armed, never any bytes", 0, policy.Fault{Kind: catalog.KindCorrupt, Pick: 0x10}, TrialSpec{}, wire.ActCorrupt,
			[]wire.Event{{Kind: wire.EvDisk, A: 0}}, "pick 0x10: nothing read, armed for the next read at the site", false},
		{"tear a write, then kill", 1, policy.Fault{Kind: catalog.KindTorn, Pick: 1}, TrialSpec{Crash: crash}, wire.ActTear,
			[]wire.Event{{Kind: wire.EvDisk, A: 1, B: 1500, C: 1024}}, "pick 0x1: kept 1024 of a 1500-byte write", true},
		{"rot a write, then kill", 1, policy.Fault{Kind: catalog.KindRot, Pick: 0x10}, TrialSpec{Crash: crash}, wire.ActRot,
			[]wire.Event{{Kind: wire.EvDisk, A: 1, B: 1500, C: 17, D: 4, Data: []byte("/d/wal.log")}}, "pick 0x10: bit 3 of byte 17 of a 1500-byte write of /d/wal.log flipped on the disk", true},
		{"rot a write: a sector", 1, policy.Fault{Kind: catalog.KindRot, Pick: 3}, TrialSpec{Crash: crash}, wire.ActRot,
			[]wire.Event{{Kind: wire.EvDisk, A: 1, B: 2048, C: 512}}, "pick 0x3: sector at byte 512 of a 2048-byte write changed on the disk", true},
		{"no rot at a read", 0, policy.Fault{Kind: catalog.KindRot, Pick: 1}, TrialSpec{Crash: crash}, wire.ActNone,
			nil, "", false},
		{"no tear without a way to crash", 1, policy.Fault{Kind: catalog.KindTorn, Pick: 1}, TrialSpec{}, wire.ActNone,
			nil, "", false},
		{"no corrupt at a write", 1, policy.Fault{Kind: catalog.KindCorrupt, Pick: 1}, TrialSpec{}, wire.ActNone,
			nil, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pol := &scripted{plan: policy.Plan{Sites: []uint32{0, 1}}, script: []policy.Fault{c.fault}}
			c.spec.Nodes = []string{"n1"}
			s := newSession(diskTestCatalog(), c.spec, pol.plan, pol.Decide)
			s.attach(1, "n1", wire.RoleAgent, true)
			s.arm()
			resp, _ := s.request(1, &wire.Request{ID: 1, Site: c.site}, t0)
			if resp.Action != c.act {
				t.Fatalf("action %v, want %v", resp.Action, c.act)
			}
			if c.act == wire.ActNone {
				if len(s.inj) != 0 {
					t.Fatalf("recorded %+v for a fault not carried out", s.inj)
				}
				return
			}
			if resp.Arg != int64(c.fault.Pick) {
				t.Fatalf("arg %d, want the pick %d", resp.Arg, c.fault.Pick)
			}
			effs := s.events(1, c.events)
			killed := false
			for _, e := range effs {
				if e.Crash == "n1" && !e.PowerLoss && !e.Reboot {
					killed = true
				}
			}
			if killed != c.kill {
				t.Fatalf("effects %+v: kill %v, want %v", effs, killed, c.kill)
			}
			if got := s.inj[0].Error; got != c.detail {
				t.Fatalf("injection Error %q, want %q", got, c.detail)
			}
			if p, ok := policy.ParsePick(s.inj[0].Error); !ok || p != c.fault.Pick {
				t.Fatalf("pick read back %d %v", p, ok)
			}
		})
	}
}

func TestSessionDiskEventWithoutInjection(t *testing.T) {
	pol := &scripted{plan: policy.Plan{Sites: []uint32{0, 1}}}
	s := newSession(diskTestCatalog(), TrialSpec{Nodes: []string{"n1"}, Crash: func(string) {}}, pol.plan, pol.Decide)
	s.attach(1, "n1", wire.RoleAgent, true)
	effs := s.events(1, []wire.Event{{Kind: wire.EvDisk, A: 1, B: 10, C: 0}})
	if len(effs) != 1 || effs[0].Crash != "" || !strings.Contains(effs[0].Warn, "never injected") {
		t.Fatalf("effects %+v: want a warning and no kill", effs)
	}
}
