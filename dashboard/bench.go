package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"

	"github.com/gofault/gofault/bench"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// BenchInfo is one bench of the store as the bench list shows it.
type BenchInfo struct {
	Name string
	// Bugs and Policies are the bench's, sorted; Seeds its highest seed.
	Bugs, Policies []string
	Seeds          int
	// Done and Running count its runs by status.
	Done, Running int
}

// BenchView is a bench's results: bench.Summarise over its stored runs.
type BenchView struct {
	Info BenchInfo
	// Summary has one row per bug and policy. A row's seeds are those
	// whose runs on both releases are done (Summarise needs both); a run
	// still running is left out, medians included.
	Summary *bench.Summary
	// Pending[i] describes the runs of Summary.Rows[i] left out (still
	// running, or without a result), "" when none is.
	Pending []string
	// Bad lists stored results that could not be read.
	Bad []string
}

// benchInfo sums up the runs of one bench.
func benchInfo(name string, runs []*store.BenchRun) BenchInfo {
	info := BenchInfo{Name: name}
	for _, r := range runs {
		if !slices.Contains(info.Bugs, r.Bug) {
			info.Bugs = append(info.Bugs, r.Bug)
		}
		if !slices.Contains(info.Policies, r.Policy) {
			info.Policies = append(info.Policies, r.Policy)
		}
		info.Seeds = max(info.Seeds, int(r.Seed))
		if r.Status == store.StatusDone {
			info.Done++
		} else {
			info.Running++
		}
	}
	sort.Strings(info.Bugs)
	sort.Strings(info.Policies)
	return info
}

// BenchResults builds the view of a bench from its stored runs.
func BenchResults(name string, runs []*store.BenchRun) (*BenchView, error) {
	v := &BenchView{Info: benchInfo(name, runs)}
	v.Summary = &bench.Summary{Name: name, Seeds: v.Info.Seeds}
	type cell struct{ bug, policy string }
	done := map[cell]map[int64]map[bench.Side]bench.Result{}
	left := map[cell]int{}
	for _, r := range runs {
		var spec bench.Spec
		if json.Unmarshal([]byte(r.Spec), &spec) == nil {
			v.Summary.Trials = max(v.Summary.Trials, spec.Trials)
		}
		c := cell{r.Bug, r.Policy}
		if r.Status != store.StatusDone {
			left[c]++
			continue
		}
		var res bench.Result
		if err := json.Unmarshal([]byte(r.Result), &res); err != nil {
			v.Bad = append(v.Bad, fmt.Sprintf("%s %s, policy %s, seed %d: %v", r.Bug, r.Side, r.Policy, r.Seed, err))
			left[c]++
			continue
		}
		if done[c] == nil {
			done[c] = map[int64]map[bench.Side]bench.Result{}
		}
		if done[c][r.Seed] == nil {
			done[c][r.Seed] = map[bench.Side]bench.Result{}
		}
		done[c][r.Seed][bench.Side(r.Side)] = res
	}
	for _, bug := range v.Info.Bugs {
		for _, p := range v.Info.Policies {
			c := cell{bug, p}
			// The seeds done on both releases, renumbered 1..k for
			// Summarise.
			var seeds []int64
			for seed, sides := range done[c] {
				if _, ok := sides[bench.Affected]; ok {
					if _, ok := sides[bench.Fixed]; ok {
						seeds = append(seeds, seed)
					}
				}
			}
			slices.Sort(seeds)
			results := map[bench.Run]bench.Result{}
			for i, seed := range seeds {
				for side, res := range done[c][seed] {
					results[bench.Run{Bug: bug, Side: side, Policy: p, Seed: int64(i + 1)}] = res
				}
			}
			s, err := bench.Summarise(name, []bench.Bug{{ID: bug}}, []string{p}, len(seeds), v.Summary.Trials, results)
			if err != nil {
				return nil, err
			}
			row := s.Rows[0]
			// Summarise names baseline failures and outcomes by its seed
			// numbers; put the stored ones back.
			for i, bf := range row.BaselineFails {
				var side string
				var seed, campaign int64
				if n, _ := fmt.Sscanf(bf, "%s seed %d, campaign %d", &side, &seed, &campaign); n == 3 && seed >= 1 && int(seed) <= len(seeds) {
					row.BaselineFails[i] = fmt.Sprintf("%s seed %d, campaign %d", side, seeds[seed-1], campaign)
				}
			}
			for i, o := range row.Outcomes {
				if o.Seed >= 1 && int(o.Seed) <= len(seeds) {
					row.Outcomes[i].Seed = seeds[o.Seed-1]
				}
			}
			v.Summary.Rows = append(v.Summary.Rows, row)
			v.Summary.Minutes += s.Minutes
			pending := ""
			if n := left[c]; n > 0 || len(seeds) < v.Info.Seeds {
				pending = fmt.Sprintf("%d of %d seeds done on both releases; %d runs still running or without a result, left out", len(seeds), v.Info.Seeds, n)
			}
			v.Pending = append(v.Pending, pending)
		}
	}
	return v, nil
}

// benchRow is one row of the bench page.
type benchRow struct {
	bench.Row
	Pending string
	// Lower: half the seeds that could find the bug or more missed, so
	// the medians are (partly) misses and print with >= (bench.Row.Lower,
	// as WriteTable does).
	Lower bool
	// FalsePositiveLinks link the false positives' trials.
	FalsePositiveLinks []trialLink
}

// trialLink is a trial ID and its campaign.
type trialLink struct {
	ID       string
	Campaign int64
}

// Rows returns the page's rows.
func (v *BenchView) Rows() []benchRow {
	var out []benchRow
	for i, r := range v.Summary.Rows {
		br := benchRow{Row: r, Pending: v.Pending[i], Lower: r.Lower()}
		for _, id := range r.FalsePositiveTrials {
			c, _, ok := record.ParseTrialID(id)
			if !ok {
				c = 0
			}
			br.FalsePositiveLinks = append(br.FalsePositiveLinks, trialLink{ID: id, Campaign: c})
		}
		out = append(out, br)
	}
	return out
}

// Affected and Fixed split a row's campaigns (Summarise lists the
// affected release's, then the fixed one's).
func (r benchRow) Affected() []int64 { return r.Campaigns[:len(r.Campaigns)/2] }

// Fixed returns the campaigns of the row on the fixed release.
func (r benchRow) Fixed() []int64 { return r.Campaigns[len(r.Campaigns)/2:] }

// Compare returns the link to the compare page of the row's campaigns
// ("../compare?c=1&c=2…"), "" when it has fewer than two.
func (r benchRow) Compare() string {
	q := url.Values{}
	for _, c := range r.Campaigns {
		if c != 0 && !slices.Contains(q["c"], fmt.Sprint(c)) {
			q.Add("c", fmt.Sprint(c))
		}
	}
	if len(q["c"]) < 2 {
		return ""
	}
	return "../compare?" + q.Encode()
}

// benches serves the list of the store's benches.
func (s *Server) benches(w http.ResponseWriter, r *http.Request) {
	names, err := s.Store.Benches(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var infos []BenchInfo
	for _, name := range names {
		runs, err := s.Store.BenchRuns(r.Context(), name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		infos = append(infos, benchInfo(name, runs))
	}
	p := newPage(nil, "benches")
	p.Index, p.DB, p.Benches = "./", s.Store.Path(), infos
	s.write(w, func(b *bytes.Buffer) error { return pages.ExecuteTemplate(b, "benches", p) })
}

// bench serves the results of the bench named by the request's {name}.
func (s *Server) bench(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	runs, err := s.Store.BenchRuns(r.Context(), name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if len(runs) == 0 {
		http.Error(w, "no bench "+url.PathEscape(name), http.StatusNotFound)
		return
	}
	v, err := BenchResults(name, runs)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	p := newPage(nil, "bench "+name)
	p.Index, p.DB, p.Bench = "../", s.Store.Path(), v
	s.write(w, func(b *bytes.Buffer) error { return pages.ExecuteTemplate(b, "bench", p) })
}
