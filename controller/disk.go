package controller

import (
	"fmt"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// diskInjection carries out a corrupt, torn or rot fault: the agent alters
// the bytes its read returned (ActCorrupt), or writes a torn prefix
// (ActTear) or the bytes whole but changed (ActRot) and reports it; the
// node is killed once the report comes (diskDone), so the prefix or the
// rotten bytes are on the file before the kill. The record's
// Error holds the pick (policy.PickText), completed by diskDone with
// what the agent changed.
func (s *session) diskInjection(inj record.Injection, f policy.Fault) (record.Injection, wire.Action, int64, []Effect, bool) {
	site := s.cat.Site(inj.Site)
	if site == nil || !site.Kind.Has(f.Kind.SiteKind()) {
		return inj, wire.ActNone, 0, []Effect{{Warn: "policy chose a disk fault the site cannot take", Args: []any{"site", inj.SiteID, "kind", f.Kind.String()}}}, false
	}
	inj.Error = policy.PickText(f.Pick)
	if f.Kind == catalog.KindCorrupt {
		return inj, wire.ActCorrupt, int64(f.Pick), nil, true
	}
	if s.spec.Crash == nil {
		return inj, wire.ActNone, 0, nil, false
	}
	if s.tearing == nil {
		s.tearing = map[string]bool{}
	}
	s.tearing[inj.Node] = true
	if f.Kind == catalog.KindRot {
		return inj, wire.ActRot, int64(f.Pick), nil, true
	}
	return inj, wire.ActTear, int64(f.Pick), nil, true
}

// diskDone records what node's agent did for the disk fault of event e
// (wire.EvDisk) in its injection and, after a torn write, kills the node.
func (s *session) diskDone(node string, e *wire.Event) []Effect {
	for i := len(s.inj) - 1; i >= 0; i-- {
		inj := &s.inj[i]
		if inj.Node != node || inj.Site != uint32(e.A) || (inj.Kind != catalog.KindCorrupt && inj.Kind != catalog.KindTorn && inj.Kind != catalog.KindRot) {
			continue
		}
		inj.Error += ": " + diskDetail(inj.Kind, e)
		if (inj.Kind == catalog.KindTorn || inj.Kind == catalog.KindRot) && s.tearing[node] {
			delete(s.tearing, node)
			return []Effect{{Crash: node}}
		}
		return nil
	}
	return []Effect{{Warn: "controller: a disk fault reported that was never injected", Args: []any{"node", node, "site", e.A}}}
}

// diskDetail says what an EvDisk reports, for the injection record:
// "bit 3 of byte 17 of a 4096-byte read of /data/wal-000001.log flipped".
// A corruption granted at a read of 0 bytes reports that read first
// ("nothing read ..., armed for the next read at the site"), then the
// later read it changed, whose number since the fault the text gives
// when it is not the first.
func diskDetail(k catalog.Kind, e *wire.Event) string {
	of := ""
	if len(e.Data) > 0 {
		of = " of " + string(e.Data)
	}
	bit, read := e.D&0xff, e.D>>8
	var text string
	switch {
	case k == catalog.KindTorn:
		return fmt.Sprintf("kept %d of a %d-byte write%s", e.C, e.B, of)
	case k == catalog.KindRot && e.B == 0:
		return "nothing written" + of + ", nothing to rot"
	case k == catalog.KindRot && bit > 0:
		return fmt.Sprintf("bit %d of byte %d of a %d-byte write%s flipped on the disk", bit-1, e.C, e.B, of)
	case k == catalog.KindRot:
		return fmt.Sprintf("sector at byte %d of a %d-byte write%s changed on the disk", e.C, e.B, of)
	case e.B == 0:
		return "nothing read" + of + ", armed for the next read at the site"
	case bit > 0:
		text = fmt.Sprintf("bit %d of byte %d of a %d-byte read%s flipped", bit-1, e.C, e.B, of)
	default:
		text = fmt.Sprintf("sector at byte %d of a %d-byte read%s changed", e.C, e.B, of)
	}
	if read > 1 {
		text += fmt.Sprintf(" (the site's read %d since the fault)", read)
	}
	return text
}
