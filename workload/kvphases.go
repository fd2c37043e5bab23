package workload

import (
	"context"
	"time"
)

// KVConfig is what a user tunes of a key-value workload.
type KVConfig struct {
	// Duration is the length of the load phase.
	Duration time.Duration
	// Recovery bounds each client's Verify.
	Recovery time.Duration
	// Keys is the number of keys; Rate the operations per second of each
	// client.
	Keys, Rate int
	// Port is the name of the nodes' HTTP port.
	Port string
}

// KVVars name the environment variables that set KVConfig's fields.
type KVVars struct{ Duration, Recovery, Keys, Rate, Port string }

// KV reads a KVConfig from the variables vars; def gives the value of
// each variable that is unset. A malformed one is reported by Err.
func (s *Settings) KV(vars KVVars, def KVConfig) KVConfig {
	return KVConfig{
		Duration: s.Duration(vars.Duration, def.Duration),
		Recovery: s.Duration(vars.Recovery, def.Recovery),
		Keys:     s.Int(vars.Keys, def.Keys),
		Rate:     s.Int(vars.Rate, def.Rate),
		Port:     s.String(vars.Port, def.Port),
	}
}

// KVPhases describe a key-value workload's phases, which RunKV runs.
type KVPhases struct {
	// KVConfig gives the load's length and rate (every client runs Mix
	// at Rate operations per second for Duration, or less when the runner
	// ends the load early: T.Load) and the recovery bound.
	KVConfig
	// Ready is one client's setup: it waits (Client.Setup) until the
	// client's node can serve.
	Ready func(ctx context.Context, c *KVClient) error
	// Mix is the load.
	Mix Mix
	// Settle, if set, runs at the start of the verify phase, before the
	// clients' Verify: it undoes what the load left half done (a member
	// removed and not yet added back, say), so the final writes come
	// after it.
	Settle func(ctx context.Context) error
	// Digest reports the members' digests (see CaughtUp).
	Digest func(ctx context.Context) error
}

// RunKV runs the phases of a key-value workload over clients: setup (Ready
// on every client), load (the mix), verify (Settle, then KVClient.Verify)
// and digest.
// Each phase runs its clients concurrently; it returns the first phase's
// error.
func RunKV(t *T, clients []*KVClient, p KVPhases) error {
	if err := t.Phase("setup", func(ctx context.Context) error {
		return Each(clients, func(c *KVClient) error { return p.Ready(ctx, c) })
	}); err != nil {
		return err
	}
	if err := t.Phase("load", func(ctx context.Context) error {
		lctx, cancel := t.Load(ctx, p.Duration)
		defer cancel()
		_ = Each(clients, func(c *KVClient) error { c.Load(lctx, p.Mix, p.Rate); return nil })
		return ctx.Err()
	}); err != nil {
		return err
	}
	if err := t.Phase("verify", func(ctx context.Context) error {
		if p.Settle != nil {
			if err := p.Settle(ctx); err != nil {
				return err
			}
		}
		_ = Each(clients, func(c *KVClient) error { c.Verify(ctx, p.Recovery); return nil })
		return ctx.Err()
	}); err != nil {
		return err
	}
	return t.Phase("digest", p.Digest)
}

// Caught is the state of a member at the highest applied index.
type Caught[S any] struct {
	// Member is the member's index.
	Member int
	// Index is the applied index it reported.
	Index uint64
	// State is what it reported.
	State S
}

// CaughtUp asks every member for its state, every 100 ms, until all those
// that answer report the same applied index, wait has passed or ctx ends;
// then it returns the states of the members at the highest index, in
// member order, and ctx's error. state(ctx, i) asks member i (all members
// concurrently; it bounds its own request) and returns its state, its
// applied index and whether it answered. Members at the same index must
// hold the same data: the caller reports their digests for the replicas
// checker; a member behind or silent reports nothing.
func CaughtUp[S any](ctx context.Context, members int, wait time.Duration, state func(ctx context.Context, i int) (S, uint64, bool)) ([]Caught[S], error) {
	deadline := time.Now().Add(wait)
	ids := make([]int, members)
	for i := range ids {
		ids[i] = i
	}
	for {
		sts := make([]Caught[S], members)
		answered := make([]bool, members)
		_ = Each(ids, func(i int) error {
			sts[i].Member = i
			sts[i].State, sts[i].Index, answered[i] = state(ctx, i)
			return nil
		})
		var top uint64
		same := true
		for i, st := range sts {
			if answered[i] {
				if top != 0 && st.Index != top {
					same = false
				}
				top = max(top, st.Index)
			}
		}
		if same || time.Now().After(deadline) || ctx.Err() != nil {
			var out []Caught[S]
			for i, st := range sts {
				if answered[i] && st.Index == top {
					out = append(out, st)
				}
			}
			return out, ctx.Err()
		}
		Sleep(ctx, 100*time.Millisecond)
	}
}
