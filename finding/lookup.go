// Package finding finds a campaign's finding by the ID that gofault report
// prints, and turns it into a regression test for the target's own
// repository (ExportGoTest).
package finding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// ErrUsage matches (errors.Is) the error of an argument that names no
// trial or finding: the command was used wrongly (exit status 2).
var ErrUsage = errors.New("usage")

// NotFoundError is Lookup's error for an ID that is no finding of the
// campaign; it matches ErrUsage.
type NotFoundError struct {
	Arg      string
	Campaign int64
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("usage: %q is no finding of campaign %d (gofault report lists them; for another campaign's, report it last or name its database with --db)", e.Arg, e.Campaign)
}

// Is makes a NotFoundError match ErrUsage.
func (e *NotFoundError) Is(target error) bool { return target == ErrUsage }

// Located is a finding of a campaign and the site of it that an
// argument chose.
type Located struct {
	// Campaign is the campaign whose trials the finding comes from.
	Campaign int64
	Finding  report.Finding
	// Site is the chosen site's number, 1 for the first, as report
	// numbers them.
	Site int
}

// Trial is the ID of the first trial of the chosen site.
func (l *Located) Trial() string { return l.Finding.Sites[l.Site-1].Trials[0] }

// Lookup finds the finding that arg names in the latest campaign of st:
// its ID ("2ee8b133dc", its first site) with, optionally, the number of
// one of its sites ("2ee8b133dc/2"), as report lists them. Every kind of
// finding is looked at: findings, fault-free failures and generic
// consequences.
func Lookup(ctx context.Context, st *store.Store, arg string) (*Located, error) {
	id, siteArg, hasSite := strings.Cut(arg, "/")
	site := 1
	if hasSite {
		if _, err := fmt.Sscanf(siteArg, "%d", &site); err != nil || site < 1 {
			return nil, fmt.Errorf("%w: %q: the site number after / must be 1 or more, as report numbers them", ErrUsage, arg)
		}
	}
	camps, err := st.Campaigns(ctx)
	if err != nil {
		return nil, err
	}
	latest, err := st.DefaultCampaign(ctx, camps)
	if err != nil {
		return nil, err
	}
	trials, err := st.Trials(ctx, latest)
	if err != nil {
		return nil, err
	}
	rep := report.New(trials, options(camps, latest))
	rep.Annotate(st.Path(), nil)
	for _, f := range slices.Concat(rep.Findings, rep.FaultFree, rep.Generic) {
		if f.ID != id {
			continue
		}
		if site > len(f.Sites) {
			return nil, fmt.Errorf("%w: finding %s has %d sites; pick one of 1..%d", ErrUsage, id, len(f.Sites), len(f.Sites))
		}
		if len(f.Sites[site-1].Trials) == 0 {
			return nil, fmt.Errorf("finding %s has no trial at site %d to replay (gofault report --trials lists the campaign's trials)", id, site)
		}
		return &Located{Campaign: latest, Finding: f, Site: site}, nil
	}
	return nil, &NotFoundError{Arg: arg, Campaign: latest}
}

// TrialID returns the trial that arg names: a trial ID ("3-17"), or a
// finding of the latest campaign with an optional site number (Lookup):
// the first trial of that site. gofault replay replays it.
func TrialID(ctx context.Context, st *store.Store, arg string) (string, error) {
	if _, _, ok := record.ParseTrialID(arg); ok {
		return arg, nil
	}
	l, err := Lookup(ctx, st, arg)
	if nf := (*NotFoundError)(nil); errors.As(err, &nf) {
		return "", fmt.Errorf("%w: %q is neither a trial ID (e.g. 3-17) nor a finding of campaign %d (gofault report lists them)", ErrUsage, arg, nf.Campaign)
	}
	if err != nil {
		return "", err
	}
	return l.Trial(), nil
}

// options are the report options of campaign id's stored config
// (checkers.generic_sites); the defaults when it cannot be read.
func options(camps []*store.Campaign, id int64) report.Options {
	for _, c := range camps {
		var cfg config.Config
		if c.ID == id && json.Unmarshal([]byte(c.Config), &cfg) == nil {
			return report.Options{GenericSites: cfg.Checkers.GenericSites}
		}
	}
	return report.Options{}
}
