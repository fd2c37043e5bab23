package report

import (
	"cmp"
	"fmt"
	"io"
	"sort"

	"github.com/gofault/gofault/record"
)

// SiteReach is where the requests at one fault site arrived over a
// campaign: the node roles and abstract states in which a fault there could
// strike.
type SiteReach struct {
	Site     string  `json:"site"`
	Requests int     `json:"requests"`
	Reached  []Reach `json:"reached"`
}

// Reach is one (role, state) in which a site was reached: its requests and
// the trials they came in.
type Reach struct {
	Role     string `json:"role,omitempty"`  // "" when unknown
	State    string `json:"state,omitempty"` // "" when none
	Requests int    `json:"requests"`
	Trials   int    `json:"trials"`
}

// Reached sums the trials' request counts (record.Trial.Reached) by site,
// role and state: sites by requests, most first, and within a site its
// (role, state) pairs the same way.
func Reached(trials []*record.Trial) []SiteReach {
	type key struct{ site, role, state string }
	per := map[key]*Reach{}
	sites := map[string]*SiteReach{}
	for _, t := range trials {
		for _, r := range t.Reached {
			k := key{r.SiteID, r.Role, r.State}
			x := per[k]
			if x == nil {
				x = &Reach{Role: r.Role, State: r.State}
				per[k] = x
			}
			x.Requests += r.Requests
			x.Trials++
			s := sites[r.SiteID]
			if s == nil {
				s = &SiteReach{Site: r.SiteID}
				sites[r.SiteID] = s
			}
			s.Requests += r.Requests
		}
	}
	for k, x := range per {
		sites[k.site].Reached = append(sites[k.site].Reached, *x)
	}
	out := make([]SiteReach, 0, len(sites))
	for _, s := range sites {
		sort.Slice(s.Reached, func(i, j int) bool {
			a, b := s.Reached[i], s.Reached[j]
			if a.Requests != b.Requests {
				return a.Requests > b.Requests
			}
			return a.Role+"\x00"+a.State < b.Role+"\x00"+b.State
		})
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Requests != out[j].Requests {
			return out[i].Requests > out[j].Requests
		}
		return out[i].Site < out[j].Site
	})
	return out
}

// WriteReached writes, per site, the roles and states its requests arrived
// in, with their request and trial counts.
func WriteReached(w io.Writer, sites []SiteReach) error {
	if len(sites) == 0 {
		_, err := fmt.Fprintln(w, "no requests recorded by site (campaigns before gofault recorded them, or no live site was reached)")
		return err
	}
	for _, s := range sites {
		if _, err := fmt.Fprintf(w, "%s  (%d requests)\n", s.Site, s.Requests); err != nil {
			return err
		}
		rw, sw := 0, 0
		for _, r := range s.Reached {
			rw, sw = max(rw, len(cmp.Or(r.Role, "role unknown"))), max(sw, len(cmp.Or(r.State, "no state")))
		}
		for _, r := range s.Reached {
			role, state := cmp.Or(r.Role, "role unknown"), cmp.Or(r.State, "no state")
			if _, err := fmt.Fprintf(w, "  %-*s  %-*s  %7d requests in %d trials\n", rw, role, sw, state, r.Requests, r.Trials); err != nil {
				return err
			}
		}
	}
	return nil
}
