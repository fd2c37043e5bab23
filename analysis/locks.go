package analysis

import (
	"golang.org/x/tools/go/ssa"
)

// lockOp classifies a call of a sync.Mutex or sync.RWMutex method: the
// region key ("W:" or "R:" plus the receiver's valueKey) and whether it
// acquires or releases.
func lockOp(c *ssa.CallCommon) (key string, acquire, ok bool) {
	f := c.StaticCallee()
	if f == nil || len(c.Args) == 0 {
		return "", false, false
	}
	mode, acq := "", false
	switch f.String() {
	case "(*sync.Mutex).Lock", "(*sync.RWMutex).Lock":
		mode, acq = "W:", true
	case "(*sync.Mutex).Unlock", "(*sync.RWMutex).Unlock":
		mode = "W:"
	case "(*sync.RWMutex).RLock":
		mode, acq = "R:", true
	case "(*sync.RWMutex).RUnlock":
		mode = "R:"
	default:
		return "", false, false
	}
	return mode + valueKey(c.Args[0]), acq, true
}

// locks marks the I/O reached while a mutex is held in f. A mutex is held
// at an instruction when every path from the function's entry to it passes
// a Lock (or RLock) of the same receiver with no matching Unlock after it:
// a forward must-analysis over the control-flow graph, so the Lock
// dominates the instruction and the region ends at every Unlock, including
// those before early returns. A deferred Unlock releases nothing before
// the function returns, so the region then extends to every exit. Calls
// made in the region mark the I/O sites of their callees, up to
// calleeDepth levels down the call graph.
func (s *sieve) locks(f *ssa.Function) {
	keys := map[string]int{} // region key -> bit
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			if c, ok := in.(*ssa.Call); ok {
				if k, acq, ok := lockOp(c.Common()); ok && acq && len(keys) < 64 {
					if _, seen := keys[k]; !seen {
						keys[k] = len(keys)
					}
				}
			}
		}
	}
	if len(keys) == 0 {
		return
	}
	all := uint64(1)<<len(keys) - 1
	if len(keys) == 64 {
		all = ^uint64(0)
	}
	// transfer applies the lock operations of one instruction.
	transfer := func(in ssa.Instruction, held uint64) uint64 {
		c, ok := in.(*ssa.Call)
		if !ok {
			return held
		}
		k, acq, ok := lockOp(c.Common())
		if !ok {
			return held
		}
		bit, known := keys[k]
		if !known {
			return held
		}
		if acq {
			return held | 1<<bit
		}
		return held &^ (1 << bit)
	}
	out := make([]uint64, len(f.Blocks))
	for i := range out {
		out[i] = all
	}
	entry := func(b *ssa.BasicBlock) uint64 {
		if b.Index == 0 || len(b.Preds) == 0 {
			return 0 // the entry, or the recover block
		}
		in := all
		for _, p := range b.Preds {
			in &= out[p.Index]
		}
		return in
	}
	for changed := true; changed; {
		changed = false
		for _, b := range f.Blocks {
			held := entry(b)
			for _, in := range b.Instrs {
				held = transfer(in, held)
			}
			if held != out[b.Index] {
				out[b.Index] = held
				changed = true
			}
		}
	}
	for _, b := range f.Blocks {
		held := entry(b)
		for _, in := range b.Instrs {
			if c, ok := in.(*ssa.Call); ok && held != 0 {
				for _, i := range s.reached(c) {
					s.sites[i].LockHeld = true
				}
			}
			held = transfer(in, held)
		}
	}
}

// barrierOp reports whether an instruction releases waiters in other
// goroutines: WaitGroup.Done, Cond.Signal/Broadcast, or a send on or close
// of a channel that another goroutine can receive from.
func barrierOp(in ssa.Instruction) bool {
	var c *ssa.CallCommon
	switch in := in.(type) {
	case *ssa.Send:
		return sharedChan(in.Chan)
	case *ssa.Call:
		c = in.Common()
	case *ssa.Defer:
		c = in.Common()
	default:
		return false
	}
	if b, ok := c.Value.(*ssa.Builtin); ok {
		return b.Name() == "close" && len(c.Args) == 1 && sharedChan(c.Args[0])
	}
	if f := c.StaticCallee(); f != nil {
		switch f.String() {
		case "(*sync.WaitGroup).Done", "(*sync.Cond).Signal", "(*sync.Cond).Broadcast":
			return true
		}
	}
	return false
}

// sharedChan reports whether a channel can be received from by another
// goroutine: anything but a channel made in this function that never
// leaves it.
func sharedChan(v ssa.Value) bool {
	mc, ok := v.(*ssa.MakeChan)
	if !ok {
		return true
	}
	for _, r := range *mc.Referrers() {
		switch r := r.(type) {
		case *ssa.Send, *ssa.Select, *ssa.UnOp, *ssa.DebugRef:
			continue
		case *ssa.Call:
			if b, ok := r.Call.Value.(*ssa.Builtin); ok && (b.Name() == "close" || b.Name() == "len" || b.Name() == "cap") {
				continue
			}
		}
		return true
	}
	return false
}

// barriers marks the I/O that runs in f before a barrier operation of f
// (the barrier is pending while the I/O runs): I/O calls from which a
// barrier is reachable in the control-flow graph within one iteration of
// any enclosing loop (a send at the top of a loop is not pending while the
// loop's I/O runs, it happened before), and any I/O of a function that
// defers one. Only f's own I/O calls count: which goroutine waits is
// only clear next to the barrier, and following callees from the long
// loops that signal would mark most of a server.
func (s *sieve) barriers(f *ssa.Function) {
	var ops []ssa.Instruction
	deferred := false
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			if barrierOp(in) {
				if _, ok := in.(*ssa.Defer); ok {
					deferred = true
				}
				ops = append(ops, in)
			}
		}
	}
	if len(ops) == 0 {
		return
	}
	for _, b := range f.Blocks {
		for _, in := range b.Instrs {
			c, ok := in.(*ssa.Call)
			if !ok || barrierOp(c) {
				continue
			}
			pending := deferred
			for _, op := range ops {
				if !pending && reachesForward(c, op) {
					pending = true
				}
			}
			if i, ok := s.site[c]; ok && pending {
				s.sites[i].Barrier = true
			}
		}
	}
}
