package campaign

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/gofault/gofault/cluster"
)

// Template start (cluster.template): instead of bootstrapping a new
// cluster in every trial, each parallel slot of a campaign forms one
// cluster once — started without faults, ready, stopped — and every trial
// the slot runs starts its members from a copy of what that left (the
// formed, empty cluster), on the slot's ports, which it keeps for the
// campaign: members such as etcd's keep their peers' addresses in their
// data. A slot holds its ports between trials (cluster.Reservation).

// templates is a campaign's pool of template slots; as many slots exist as
// trials ever ran at once.
type templates struct {
	parent string // <workdir>/templates
	prefix string // the campaign's number and "-"
	// dir holds the slots' templates (one subdirectory each): a fresh
	// directory under parent, so that a replay or a second campaign in the
	// same work dir never touches this one's.
	dir string

	mu   sync.Mutex
	free []*slot
	all  []*slot
}

// slot is one template: its ports and its formed cluster's directory.
type slot struct {
	res    *cluster.Reservation
	dir    string
	formed bool
	// formSeconds is how long forming it took.
	formSeconds float64
}

func newTemplates(workdir string, campaign int64) *templates {
	return &templates{parent: filepath.Join(workdir, "templates"), prefix: strconv.FormatInt(campaign, 10) + "-"}
}

// get takes a free slot, or makes one, and forms its cluster if it has
// none yet (spec says how: the nodes, binary and environment of the
// trials).
func (p *templates) get(ctx context.Context, spec cluster.Spec) (*slot, error) {
	p.mu.Lock()
	if p.dir == "" {
		if err := os.MkdirAll(p.parent, 0o755); err != nil {
			p.mu.Unlock()
			return nil, fmt.Errorf("cluster template: %w", err)
		}
		dir, err := os.MkdirTemp(p.parent, p.prefix)
		if err != nil {
			p.mu.Unlock()
			return nil, fmt.Errorf("cluster template: %w", err)
		}
		p.dir = dir
	}
	var s *slot
	if n := len(p.free); n > 0 {
		s, p.free = p.free[n-1], p.free[:n-1]
	} else {
		res, err := cluster.Reserve(spec.Nodes.Count * len(spec.Nodes.Ports))
		if err != nil {
			p.mu.Unlock()
			return nil, fmt.Errorf("cluster template: %w", err)
		}
		s = &slot{res: res, dir: filepath.Join(p.dir, strconv.Itoa(len(p.all)+1))}
		p.all = append(p.all, s)
	}
	p.mu.Unlock()
	if s.formed {
		return s, nil
	}
	if err := os.RemoveAll(s.dir); err != nil {
		p.put(s)
		return nil, fmt.Errorf("cluster template: %w", err)
	}
	spec.Dir, spec.Trial, spec.Reserved = s.dir, "template-"+filepath.Base(s.dir), s.res
	start := time.Now()
	if err := cluster.Form(ctx, spec); err != nil {
		p.put(s)
		return nil, err
	}
	secs := time.Since(start).Seconds()
	p.mu.Lock() // counts reads them
	s.formed, s.formSeconds = true, secs
	p.mu.Unlock()
	spec.Log.Info("cluster template formed", "dir", s.dir, "ports", s.res.Ports(), "seconds", fmt.Sprintf("%.1f", secs))
	return s, nil
}

// put gives a slot back after its trial's cluster stopped.
func (p *templates) put(s *slot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, s)
}

// counts returns how many templates were formed and how long that took in
// all; nil-safe (no cluster.template).
func (p *templates) counts() (n int, seconds float64) {
	if p == nil {
		return 0, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.all {
		if s.formed {
			n++
			seconds += s.formSeconds
		}
	}
	return n, seconds
}

// close releases every slot's ports and removes the templates; nil-safe
// and idempotent.
func (p *templates) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.all {
		s.res.Release()
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
		os.Remove(p.parent) // when no other campaign has templates there
	}
	p.all, p.free, p.dir = nil, nil, ""
}
