package gotest

// A gofault test campaign in the store: made new, or found again and
// continued (Options.Resume) from what its earlier runs stored — the
// fault-free pass's measures, the trials, the policy's state — on the same
// build of the test binary.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// prior is what earlier runs of a resumed campaign stored.
type prior struct {
	// measured are the tests the fault-free pass measured.
	measured []Measure
	// fault are the fault trials.
	fault []*record.Trial
	// policy is the policy's last snapshot (nil: none).
	policy []byte
}

// ranTests counts the fault trials stored by test.
func (p prior) ranTests() map[string]int {
	out := map[string]int{}
	for _, tr := range p.fault {
		out[testOf(tr)]++
	}
	return out
}

// campaignName is the store's name of the campaign of o.
func campaignName(o Options) string { return "test " + o.Package }

// optionsHash identifies a campaign's options for Resume: all that is
// stored but the number of trials, which a resume may change.
func optionsHash(o Options) (string, error) {
	o.Trials = 0
	conf, err := json.Marshal(stored{GoTest: &o})
	if err != nil {
		return "", fmt.Errorf("campaign config: %w", err)
	}
	h := sha256.Sum256(conf)
	return hex.EncodeToString(h[:]), nil
}

// campaign makes the campaign in the store, or with o.Resume finds the
// newest one of the same options (or Options.Campaign, which must have
// been made with them, on the same build) and reads back what it stored;
// c.next is then the index after its last trial.
func (c *campaignRun) campaign(ctx context.Context) error {
	o := c.o
	hash, err := optionsHash(o)
	if err != nil {
		return err
	}
	conf, err := json.Marshal(stored{GoTest: &o})
	if err != nil {
		return fmt.Errorf("campaign config: %w", err)
	}
	resume := o.Resume || o.Campaign != 0
	saved, err := c.st.OpenCampaign(ctx, store.Opening{
		ID: o.Campaign, Resume: resume, BuildKey: c.key,
		New:   store.Campaign{Name: campaignName(o), ConfigHash: hash, Policy: o.Policy, Seed: o.Seed, Config: string(conf)},
		Check: func(saved *store.CampaignState) error { return c.resumable(saved, hash) },
	})
	if o.Campaign == 0 && resume && errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no gofault test campaign of %s with these options in %s to resume (were flags other than --trials changed? run without --resume to start a new one)", o.Package, o.DB)
	}
	if err != nil {
		return err
	}
	c.id = saved.Campaign.ID
	if o.Opened != nil {
		if err := o.Opened(c.id); err != nil {
			return err
		}
	}
	c.next = 1
	c.trials = saved.Trials
	for _, tr := range saved.Trials {
		c.next = max(c.next, tr.Index+1)
		if tr.Policy != record.BaselinePolicy {
			c.prior.fault = append(c.prior.fault, tr)
		}
	}
	c.prior.policy = saved.Policy
	if c.prior.measured, err = decodeMeasures(c.id, saved.TestPass); err != nil {
		return err
	}
	if resume {
		c.o.Log.Info("resuming campaign", "campaign", c.id, "measured", len(c.prior.measured), "fault_trials", len(c.prior.fault), "next", c.next)
	}
	return nil
}

// resumable says why the campaign that saved stored cannot be continued
// with c's options, of hash, and build; nil when it can.
func (c *campaignRun) resumable(saved *store.CampaignState, hash string) error {
	camp := saved.Campaign
	if camp.Name != campaignName(c.o) || camp.ConfigHash != hash {
		return fmt.Errorf("campaign %d (%s) was not made with these options, so it cannot be continued with them; start a new one", camp.ID, camp.Name)
	}
	if key := saved.BuildKey; key != "" && key != c.key {
		return fmt.Errorf("campaign %d ran another build of %s's test binary (its sources, tests or build flags changed since: build key %.12s, now %.12s), so its sites and trials would not match this one's; run without --resume to start a new campaign", camp.ID, c.o.Package, key, c.key)
	}
	return nil
}

// decodeMeasures decodes the fault-free pass campaign id stored (data, as
// putMeasured wrote it; none when data is empty).
func decodeMeasures(id int64, data []byte) ([]Measure, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var ms []Measure
	if err := json.Unmarshal(data, &ms); err != nil {
		return nil, fmt.Errorf("fault-free pass of campaign %d: %w", id, err)
	}
	return ms, nil
}

// putMeasured stores the measures of the tests measured so far.
func (c *campaignRun) putMeasured(ctx context.Context, done map[string]Measure) error {
	ms := make([]Measure, 0, len(done))
	for _, m := range done {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b Measure) int { return strings.Compare(a.Test, b.Test) })
	data, err := json.Marshal(ms)
	if err != nil {
		return fmt.Errorf("encode fault-free pass: %w", err)
	}
	return c.st.PutTestPass(context.WithoutCancel(ctx), c.id, data)
}
