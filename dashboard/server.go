package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofault/gofault/store"
)

// ReplayResult is what the Replay button shows.
type ReplayResult struct {
	Trial string `json:"trial"`
	// Reproduced: every failure of the original recurred.
	Reproduced bool `json:"reproduced"`
	// Summary is one line (the replay's verdict); Output all it printed.
	Summary string `json:"summary"`
	Output  string `json:"output"`
}

// Server serves the pages of a store's campaigns live (gofault ui): every
// request reads the store afresh, and the campaign and trial-list pages
// reload themselves through server-sent events when a trial is saved or
// the campaign's status changes, in this process or another.
type Server struct {
	Store *store.Store
	// Replay re-runs a trial (gofault replay); nil hides nothing but
	// answers the button with an error.
	Replay func(ctx context.Context, trial string) (ReplayResult, error)
	// Poll is how often the events stream looks at the store; 0 means 1s.
	Poll time.Duration

	replaying sync.Mutex
}

// Handler returns the server's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.campaigns)
	mux.HandleFunc("GET /latest", s.latest)
	mux.HandleFunc("GET /compare", s.compare)
	mux.HandleFunc("GET /benches", s.benches)
	mux.HandleFunc("GET /bench/{name}", s.bench)
	mux.HandleFunc("GET /c/{id}/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, campaignPage, http.StatusFound)
	})
	mux.HandleFunc("GET /c/{id}/events", s.events)
	mux.HandleFunc("GET /c/{id}/{page}", s.page)
	mux.HandleFunc("POST /c/{id}/replay/{trial}", s.replay)
	mux.HandleFunc("POST /c/{id}/pause", s.pause(true))
	mux.HandleFunc("POST /c/{id}/resume", s.pause(false))
	return mux
}

// campaignsRun returns the store's campaigns and the trials each ran.
func (s *Server) campaignsRun(ctx context.Context) ([]*store.Campaign, map[int64]int, error) {
	camps, err := s.Store.Campaigns(ctx)
	if err != nil {
		return nil, nil, err
	}
	ran, err := s.Store.TrialsRun(ctx)
	return camps, ran, err
}

func (s *Server) campaigns(w http.ResponseWriter, r *http.Request) {
	camps, ran, err := s.campaignsRun(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// Newest first.
	for i, j := 0, len(camps)-1; i < j; i, j = i+1, j-1 {
		camps[i], camps[j] = camps[j], camps[i]
	}
	p := newPage(nil, "campaigns")
	p.DB, p.Campaigns, p.Ran = s.Store.Path(), camps, ran
	s.write(w, func(b *bytes.Buffer) error { return pages.ExecuteTemplate(b, "campaigns", p) })
}

// compare shows the campaigns named by the query's c parameters side by
// side.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	var cs []*Campaign
	for _, v := range r.URL.Query()["c"] {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			http.Error(w, "bad campaign ID "+strconv.Quote(v), http.StatusBadRequest)
			return
		}
		c, err := Load(r.Context(), s.Store, id)
		if errors.Is(err, store.ErrNotFound) {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		http.Redirect(w, r, "/", http.StatusFound)
		return
	}
	p := newPage(nil, "compare")
	p.Index, p.Live, p.Cmp = "/", true, Compare(cs)
	s.write(w, func(b *bytes.Buffer) error { return pages.ExecuteTemplate(b, "compare", p) })
}

// latest redirects to the newest campaign that ran trials and is not a
// replay.
func (s *Server) latest(w http.ResponseWriter, r *http.Request) {
	camps, ran, err := s.campaignsRun(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var id int64
	for _, c := range camps {
		if c.Policy != "replay" && (ran[c.ID] > 0 || id == 0) {
			id = c.ID
		}
	}
	if id == 0 {
		http.Redirect(w, r, "/", http.StatusFound)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/c/%d/%s", id, campaignPage), http.StatusFound)
}

// campaign loads the campaign of the request's {id}; it has answered the
// request when it returns nil.
func (s *Server) campaign(w http.ResponseWriter, r *http.Request) *Campaign {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.Error(w, "bad campaign ID", http.StatusBadRequest)
		return nil
	}
	c, err := Load(r.Context(), s.Store, id)
	if errors.Is(err, store.ErrNotFound) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return nil
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil
	}
	return c
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	c := s.campaign(w, r)
	if c == nil {
		return
	}
	p := newPage(c, fmt.Sprintf("campaign %d", c.ID))
	p.Index, p.Live = "../../", true
	name := r.PathValue("page")
	switch {
	case name == campaignPage || name == trialsPage:
		p.Stream = "events"
		p.Version = version(len(c.Trials), c.Status, c.Paused)
		render := renderCampaign
		if name == trialsPage {
			render = renderTrials
		}
		s.write(w, func(b *bytes.Buffer) error { return render(b, p) })
	case strings.HasPrefix(name, "finding-") && strings.HasSuffix(name, ".html"):
		id := strings.TrimSuffix(strings.TrimPrefix(name, "finding-"), ".html")
		s.write(w, func(b *bytes.Buffer) error {
			if ok, err := renderFinding(b, p, id); !ok && err == nil {
				return errNoPage
			} else {
				return err
			}
		})
	case strings.HasPrefix(name, "trial-") && strings.HasSuffix(name, ".html"):
		id := strings.TrimSuffix(strings.TrimPrefix(name, "trial-"), ".html")
		s.write(w, func(b *bytes.Buffer) error {
			if ok, err := renderTrial(b, p, id); !ok && err == nil {
				return errNoPage
			} else {
				return err
			}
		})
	case strings.HasPrefix(name, "artifact-"):
		// artifact-<campaign>-<index>-<file>: only a file the trial's
		// checkers named.
		parts := strings.SplitN(strings.TrimPrefix(name, "artifact-"), "-", 3)
		if len(parts) == 3 {
			if t := c.Trial(parts[0] + "-" + parts[1]); t != nil {
				for _, a := range Artifacts(t) {
					if a.Name == name {
						http.ServeFile(w, r, a.Path)
						return
					}
				}
			}
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

var errNoPage = errors.New("no such page")

// write renders a page into a buffer first, so an error is a clean 500 (or
// 404) rather than half a page.
func (s *Server) write(w http.ResponseWriter, render func(*bytes.Buffer) error) {
	var b bytes.Buffer
	if err := render(&b); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, errNoPage) {
			code = http.StatusNotFound
		}
		http.Error(w, err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// version is what the events stream sends: it changes when a trial is
// saved, the campaign's status changes, or it is paused or resumed.
func version(trials int, status string, paused bool) string {
	if paused {
		status += "-paused"
	}
	return fmt.Sprintf("%d-%s", trials, status)
}

// pause answers the Pause (paused) and Resume buttons: it sets the
// campaign's pause flag, which its run (in any process) reads before it
// begins each fault trial, and redirects back to the campaign page.
func (s *Server) pause(paused bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			http.Error(w, "bad campaign ID", http.StatusBadRequest)
			return
		}
		if _, err := s.Store.Campaign(r.Context(), id); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		if err := s.Store.SetPaused(r.Context(), id, paused); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		http.Redirect(w, r, campaignPage, http.StatusSeeOther)
	}
}

// events streams server-sent events: an "update" with the campaign's
// version (trials saved, status) whenever it changes, looked up every Poll,
// until the client goes away.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.Error(w, "bad campaign ID", http.StatusBadRequest)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	poll := s.Poll
	if poll <= 0 {
		poll = time.Second
	}
	last := ""
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		c, err := s.Store.Campaign(r.Context(), id)
		if err != nil {
			return
		}
		idx, err := s.Store.TrialIndexes(r.Context(), id)
		if err != nil {
			return
		}
		paused, err := s.Store.Paused(r.Context(), id)
		if err != nil {
			return
		}
		if v := version(len(idx), c.Status, paused); v != last {
			last = v
			fmt.Fprintf(w, "event: update\ndata: %s\n\n", v)
			flusher.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// replay runs the Replay of the request's trial, one at a time, and
// answers its ReplayResult as JSON.
func (s *Server) replay(w http.ResponseWriter, r *http.Request) {
	trial := r.PathValue("trial")
	w.Header().Set("Content-Type", "application/json")
	if s.Replay == nil {
		w.WriteHeader(http.StatusNotImplemented)
		json.NewEncoder(w).Encode(ReplayResult{Trial: trial, Summary: "replay is not available in this server"})
		return
	}
	if !s.replaying.TryLock() {
		w.WriteHeader(http.StatusConflict)
		json.NewEncoder(w).Encode(ReplayResult{Trial: trial, Summary: "another replay is running; try again when it ends"})
		return
	}
	defer s.replaying.Unlock()
	res, err := s.Replay(r.Context(), trial)
	res.Trial = trial
	if err != nil && res.Summary == "" {
		res.Summary = "replay failed: " + err.Error()
	}
	json.NewEncoder(w).Encode(res)
}
