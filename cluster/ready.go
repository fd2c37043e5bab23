package cluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// probeInterval is the pause between readiness probes.
const probeInterval = 50 * time.Millisecond

// probe waits until target answers: "tcp:host:port" accepts a connection,
// or an http(s) URL answers 2xx; an empty target is ready at once. It fails
// when p ends first or ctx is done (timeout names the ready timeout).
func probe(ctx context.Context, target string, p *Process, timeout time.Duration) error {
	if target == "" {
		return nil
	}
	client := &http.Client{Timeout: time.Second}
	var last error
	for {
		var err error
		if addr, ok := strings.CutPrefix(target, "tcp:"); ok {
			var conn net.Conn
			d := net.Dialer{Timeout: time.Second}
			if conn, err = d.DialContext(ctx, "tcp", addr); err == nil {
				conn.Close()
				return nil
			}
		} else {
			err = httpReady(ctx, client, target)
			if err == nil {
				return nil
			}
		}
		last = err
		t := time.NewTimer(probeInterval)
		select {
		case <-p.Done():
			t.Stop()
			e := p.Wait()
			if e.Signal != "" {
				return fmt.Errorf("exited before it was ready (%s, %s)", e.Signal, reasonText(e.Reason))
			}
			return fmt.Errorf("exited before it was ready (exit status %d)", e.Code)
		case <-ctx.Done():
			t.Stop()
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("not ready after %s (cluster.ready.timeout): %s: %v", timeout, strings.TrimPrefix(target, "tcp:"), last)
			}
			return ctx.Err()
		case <-t.C:
		}
	}
}

func reasonText(r string) string {
	if r == ReasonSelf {
		return "on its own"
	}
	return r
}

func httpReady(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}
