package campaign

// The kinds a campaign chose that no trial injected, and why that may be.

import (
	"fmt"
	"strings"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// maxNamedSites bounds the site IDs a KindReach names.
const maxNamedSites = 10

// KindReach is a fault kind of faults.kinds that none of a campaign's fault
// trials injected, with the catalog's sites that could take it and those of
// them some fault trial reached (asked a decision at), so that a campaign
// that could not inject what it was asked for says so and why.
type KindReach struct {
	Kind string `json:"kind"`
	// Sites counts the sites that can take the kind (for a kind no site
	// holds, such as powerloss, those of the kind it strikes at: crash
	// sites; for leadercut every site); SiteIDs names the first of them.
	Sites   int      `json:"sites"`
	SiteIDs []string `json:"site_ids,omitempty"`
	// Reached counts those sites that some fault trial reached; ReachedIDs
	// names the first of them.
	Reached    int      `json:"reached"`
	ReachedIDs []string `json:"reached_ids,omitempty"`
}

// strikeKind is the site kind a fault of kind k is struck at.
func strikeKind(k catalog.Kind) catalog.Kind {
	switch k {
	case catalog.KindPowerLoss, catalog.KindReboot:
		return catalog.KindCrash
	case catalog.KindPowerLossAfter:
		return catalog.KindCrashAfter
	case catalog.KindDisconnect, catalog.KindOneWay, catalog.KindSplit:
		return catalog.KindPartition
	case catalog.KindLeaderCut:
		return catalog.KindNone // any site
	}
	return k
}

// notInjected returns the kinds of kinds that no fault trial of trials
// injected (none when no fault trial ran), each with the sites of cat that
// could take it and those the fault trials reached.
func notInjected(kinds []catalog.Kind, cat *catalog.Catalog, trials []*record.Trial) []KindReach {
	injected := catalog.KindNone
	reached := map[uint32]bool{}
	faultTrials := 0
	for _, t := range trials {
		if t.Policy == baselinePolicy {
			continue
		}
		faultTrials++
		for _, inj := range t.Injections {
			injected |= inj.Kind
		}
		for _, r := range t.Reached {
			reached[r.Site] = true
		}
	}
	if faultTrials == 0 || cat == nil {
		return nil
	}
	var out []KindReach
	for _, k := range kinds {
		if k == catalog.KindNone || injected&k != 0 {
			continue
		}
		kr := KindReach{Kind: k.String()}
		sk := strikeKind(k)
		for i := range cat.Sites {
			s := &cat.Sites[i]
			if !s.Kind.Has(sk) {
				continue
			}
			kr.Sites++
			if len(kr.SiteIDs) < maxNamedSites {
				kr.SiteIDs = append(kr.SiteIDs, s.ID)
			}
			if reached[s.Index] {
				kr.Reached++
				if len(kr.ReachedIDs) < maxNamedSites {
					kr.ReachedIDs = append(kr.ReachedIDs, s.ID)
				}
			}
		}
		out = append(out, kr)
	}
	return out
}

// notInjectedWarning says which chosen kinds no fault trial injected, how
// many sites could take each and how many were reached ("" for none).
func notInjectedWarning(ks []KindReach, faultTrials int) string {
	if len(ks) == 0 {
		return ""
	}
	var names, parts []string
	for _, k := range ks {
		names = append(names, k.Kind)
		switch {
		case k.Sites == 0:
			parts = append(parts, fmt.Sprintf("%s: no site can take it", k.Kind))
		case k.Reached == 0:
			parts = append(parts, fmt.Sprintf("%s: %s can take it, none reached (%s)", k.Kind, sites(k.Sites), strings.Join(head(k.SiteIDs, 3), ", ")))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s can take it, %d reached (%s) but never struck", k.Kind, sites(k.Sites), k.Reached, strings.Join(head(k.ReachedIDs, 3), ", ")))
		}
	}
	return fmt.Sprintf("no %s fault injected in %d fault trials: %s (gofault report --trials --db shows each trial's faults)",
		strings.Join(names, " or "), faultTrials, strings.Join(parts, "; "))
}

// head returns the first n of ids, with "..." after them when there are more.
func head(ids []string, n int) []string {
	if len(ids) <= n {
		return ids
	}
	return append(ids[:n:n], "...")
}

// sites is "1 site" or "n sites".
func sites(n int) string {
	if n == 1 {
		return "1 site"
	}
	return fmt.Sprintf("%d sites", n)
}
