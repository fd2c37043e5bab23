package policy

import (
	"encoding/json"
	"fmt"
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
// it injects each site once per distinct call stack; insensitive, once per
// site. Delays at timeout-protected sites are sized beyond the largest
// timeout the nodes reported for them; elsewhere they vary around
// Env.Delay.
type sieve struct {
	env       Env
	sensitive bool
	sites     []uint32
	q         quota

	mem struct {
		Tried    tried            `json:"tried"`    // site ID (+ stack key)
		PerSite  map[string]int   `json:"per_site"` // injections per site ID
		Timeouts map[uint32]int64 `json:"timeouts"` // timeout point → largest value seen, ns
	}
}

func newSieve(env Env, sensitive bool) *sieve {
	s := &sieve{env: env, sensitive: sensitive, sites: sieveSites(env)}
	s.mem.Tried = tried{}
	s.mem.PerSite = map[string]int{}
	s.mem.Timeouts = map[uint32]int64{}
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

func (s *sieve) Begin(TrialInfo) Plan {
	s.q.reset(s.env.perTrial())
	return Plan{Sites: s.sites, Stacks: s.sensitive, States: true, Timeouts: true}
}

func (s *sieve) Decide(req *Request) Decision {
	if s.q.full() || req.Site == nil {
		return Decision{Done: s.q.full()}
	}
	id := req.Site.ID
	if s.sensitive {
		id += "|" + StackKey(req.Stack)
	}
	if s.mem.Tried[id] {
		return Decision{}
	}
	s.mem.Tried[id] = true
	n := s.mem.PerSite[req.Site.ID]
	s.mem.PerSite[req.Site.ID] = n + 1
	return s.q.grant(Fault{Kind: catalog.KindDelay, Delay: s.delay(req.Site, n)})
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
}

func (s *sieve) learnTimeouts(ts []record.Timeout) {
	for _, t := range ts {
		if int64(t.Duration) > s.mem.Timeouts[t.Site] {
			s.mem.Timeouts[t.Site] = int64(t.Duration)
		}
	}
}

func (s *sieve) Snapshot() ([]byte, error) { return json.Marshal(&s.mem) }

func (s *sieve) Restore(data []byte) error {
	if err := json.Unmarshal(data, &s.mem); err != nil {
		return fmt.Errorf("restore %s policy: %w", s.Name(), err)
	}
	return nil
}
