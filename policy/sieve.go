package policy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func init() {
	Register("sieve", func(env Env) (Policy, error) { return newSieve(env, true), nil })
	Register("sieve-insensitive", func(env Env) (Policy, error) { return newSieve(env, false), nil })
}

// Delay sizing of the Sieve policies.
const (
	// timeoutFactor puts a delay at a timeout-protected site beyond the
	// timeout observed there.
	timeoutFactor = 1.5
	// maxDelay caps any delay, so a trial still ends.
	maxDelay = 30 * time.Second
)

// delayFactors vary the delay across repeated injections at one site: a
// single fixed length hides bugs that need a delay just past one timeout but
// short of another.
var delayFactors = []float64{1, 3, 0.5, 6}

// sieve injects one delay per trial at I/O that runs while a lock is held,
// while a barrier is pending, or under a timeout (Sieve). Context-sensitive,
// it injects each site once per distinct call stack and node role (the
// leader's WAL write and a follower's are two); insensitive, once per
// site and role. Delays at timeout-protected sites are sized beyond the
// largest timeout the nodes reported for them; elsewhere they vary around
// Env.Delay.
//
// When the trials reach no site (and stack) left untried, it widens (once):
// each again on every node (only where no role is known: with a role,
// another node in the same role is no new place), then in every abstract
// state of the asking task, then up to len(delayFactors)-1 more rounds,
// each with the site's next delay factor; it is exhausted when a trial of
// the last round injected nothing.
type sieve struct {
	env       Env
	sensitive bool
	sites     []uint32
	ids       once
	trials    running[onceRun]

	mem struct {
		PerSite  map[string]int   `json:"per_site"` // injections per site ID
		Timeouts map[uint32]int64 `json:"timeouts"` // timeout point → largest value seen, ns
	}
}

func newSieve(env Env, sensitive bool) *sieve {
	s := &sieve{env: env, sensitive: sensitive, sites: sieveSites(env)}
	s.mem.PerSite = map[string]int{}
	s.mem.Timeouts = map[uint32]int64{}
	site := func(req *Request) string { return req.Site.ID }
	if sensitive {
		site = func(req *Request) string { return req.Site.ID + "|" + StackKey(req.Stack) }
	}
	levels := []level{
		func(req *Request, _ Fault) string { return site(req) + roleOf(req) },
		func(req *Request, _ Fault) string { return site(req) + "|" + where(req) },
		func(req *Request, _ Fault) string { return site(req) + "|" + where(req) + "|" + stateOf(req) },
	}
	implied := len(levels)
	for r := 1; r < len(delayFactors); r++ {
		levels = append(levels, func(req *Request, _ Fault) string {
			return site(req) + "|" + where(req) + "|" + stateOf(req) + "#" + strconv.Itoa(r)
		})
	}
	s.ids = newOnce(levels...)
	s.ids.implied = implied
	return s
}

// sieveSites returns the delay sites under a lock, a pending barrier or a
// timeout, one per basic block where the analysis grouped them. A catalog
// without those annotations yields every delay site.
func sieveSites(env Env) []uint32 {
	if env.Catalog == nil || !env.allows(catalog.KindDelay) {
		return nil
	}
	var all, ctx []uint32
	for i := range env.Catalog.Sites {
		s := &env.Catalog.Sites[i]
		if !s.Kind.Has(catalog.KindDelay) {
			continue
		}
		all = append(all, s.Index)
		if (s.LockHeld || s.Barrier || s.Timeout) && (s.Block == "" || s.Rep) {
			ctx = append(ctx, s.Index)
		}
	}
	if len(ctx) == 0 {
		return all
	}
	return ctx
}

func (s *sieve) Name() string {
	if s.sensitive {
		return "sieve"
	}
	return "sieve-insensitive"
}

func (s *sieve) Begin(info TrialInfo) Plan {
	beginOnce(&s.trials, &s.ids, &s.env, info.Index)
	if s.ids.mem.Exhausted {
		return Plan{}
	}
	return Plan{Sites: s.sites, Stacks: s.sensitive, States: true, Timeouts: true}
}

func (s *sieve) Decide(req *Request) Decision {
	t := s.trials.of(req.Trial)
	if t == nil || req.Site == nil {
		return Decision{}
	}
	s.ids.see(t.ids, req, Fault{})
	if t.q.full() || !s.ids.untried(req, Fault{}) {
		return Decision{}
	}
	s.ids.grant(t.ids, req, Fault{})
	n := s.mem.PerSite[req.Site.ID]
	s.mem.PerSite[req.Site.ID] = n + 1
	return t.q.grant(Fault{Kind: catalog.KindDelay, Delay: s.delay(req.Site, n)})
}

// delay sizes the n-th delay (from 0) at site.
func (s *sieve) delay(site *catalog.Site, n int) time.Duration {
	f := delayFactors[n%len(delayFactors)]
	var observed int64
	for _, p := range site.Timeouts {
		if v := s.mem.Timeouts[p]; v > observed {
			observed = v
		}
	}
	d := time.Duration(f * float64(s.env.delay()))
	if observed > 0 {
		d = time.Duration(timeoutFactor * f * float64(observed))
		if f < 1 {
			// Just past the timeout, never short of it.
			d = time.Duration(1.1 * float64(observed))
		}
	}
	return min(d, maxDelay)
}

func (s *sieve) End(out Outcome) {
	s.learnTimeouts(out.Timeouts)
	endOnce(&s.ids, &s.trials, out.Index)
}

// Exhausted reports that every widening of the sites was tried, or that
// there is no site to delay at all (faults.kinds without delay).
func (s *sieve) Exhausted() bool { return s.ids.mem.Exhausted || len(s.sites) == 0 }

func (s *sieve) learnTimeouts(ts []record.Timeout) {
	for _, t := range ts {
		if int64(t.Duration) > s.mem.Timeouts[t.Site] {
			s.mem.Timeouts[t.Site] = int64(t.Duration)
		}
	}
}

// sieveMemory is what a Sieve policy snapshots.
type sieveMemory struct {
	Tried     tried            `json:"tried"`
	Level     int              `json:"level"`
	Exhausted bool             `json:"exhausted,omitempty"`
	PerSite   map[string]int   `json:"per_site"`
	Timeouts  map[uint32]int64 `json:"timeouts"`
}

func (s *sieve) Snapshot() ([]byte, error) {
	o := &s.ids.mem
	return json.Marshal(sieveMemory{o.Tried, o.Level, o.Exhausted, s.mem.PerSite, s.mem.Timeouts})
}

func (s *sieve) Restore(data []byte) error {
	var m sieveMemory
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("restore %s policy: %w", s.Name(), err)
	}
	if err := s.ids.restore(data); err != nil {
		return fmt.Errorf("restore %s policy: %w", s.Name(), err)
	}
	if m.PerSite != nil {
		s.mem.PerSite = m.PerSite
	}
	if m.Timeouts != nil {
		s.mem.Timeouts = m.Timeouts
	}
	return nil
}
