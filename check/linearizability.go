package check

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/gofault/gofault/record"
)

// Linearizability checks the key-value history the workload recorded
// (record.Op in EvOp events) with porcupine, partitioned by key, under a
// time budget (Input.LinearizabilityTimeout). Operations whose outcome is
// unknown may or may not have happened: they are given an infinite return
// time, and unknown reads, which change nothing, are dropped. A search that
// runs out of time is Unknown, never Failed. A failing verdict names the
// key and a reduced set of operations that still cannot be linearized.
//
// The model: a key's state is its value, "" when absent; get returns it;
// put sets it; delete clears it; cas sets Value if the state equals Expect
// and returns "true", else returns "false".
type Linearizability struct{}

// Name implements Checker.
func (Linearizability) Name() string { return NameLinearizability }

// kvInput is a model operation's input.
type kvInput struct {
	kind, key, value, expect string
}

// kvOutput is a model operation's output.
type kvOutput struct {
	out     string
	unknown bool
}

// kvModel is a single-key register with get/put/delete/cas.
var kvModel = porcupine.Model{
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(string), input.(kvInput), output.(kvOutput)
		switch in.kind {
		case "get":
			return out.unknown || out.out == st, st
		case "put":
			return true, in.value
		case "delete":
			return true, ""
		case "cas":
			if out.unknown {
				if st == in.expect {
					return true, in.value
				}
				return true, st
			}
			if st == in.expect {
				return out.out == "true", in.value
			}
			return out.out == "false", st
		}
		return false, st
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(kvInput), output.(kvOutput)
		res := fmt.Sprintf("%q", out.out)
		if out.unknown {
			res = "?"
		}
		switch in.kind {
		case "get":
			return fmt.Sprintf("get(%s) → %s", in.key, res)
		case "put":
			return fmt.Sprintf("put(%s, %q)", in.key, in.value)
		case "delete":
			return fmt.Sprintf("delete(%s)", in.key)
		case "cas":
			return fmt.Sprintf("cas(%s, %q→%q) → %s", in.key, in.expect, in.value, res)
		}
		return in.kind
	},
	DescribeState: func(state any) string { return fmt.Sprintf("%q", state) },
}

// opMeta keeps the client of an operation for evidence.
type opMeta struct {
	client string
	op     record.Op
}

// histories returns the porcupine operations per key, ordered by key.
func histories(tr *record.Trial) (keys []string, byKey map[string][]porcupine.Operation, ops int) {
	byKey = map[string][]porcupine.Operation{}
	clientIDs := map[string]int{}
	for _, e := range tr.Client {
		if e.Kind != record.EvOp || e.Op == nil {
			continue
		}
		op := *e.Op
		switch op.Kind {
		case "get", "put", "delete", "cas":
		default:
			continue
		}
		if op.Unknown && op.Kind == "get" {
			continue
		}
		id, ok := clientIDs[e.Client]
		if !ok {
			id = len(clientIDs)
			clientIDs[e.Client] = id
		}
		ret := op.Return
		if ret < op.Call {
			ret = op.Call // a wall-clock step back; keep the interval valid
		}
		if op.Unknown {
			ret = math.MaxInt64
		}
		if _, ok := byKey[op.Key]; !ok {
			keys = append(keys, op.Key)
		}
		byKey[op.Key] = append(byKey[op.Key], porcupine.Operation{
			ClientId: id,
			Input:    kvInput{kind: op.Kind, key: op.Key, value: op.Value, expect: op.Expect},
			Call:     op.Call,
			Output:   kvOutput{out: op.Out, unknown: op.Unknown},
			Return:   ret,
			Metadata: opMeta{client: e.Client, op: op},
		})
		ops++
	}
	sort.Strings(keys)
	return keys, byKey, ops
}

// Check implements Checker. It draws nothing, whatever in.Visualize: Run
// draws.
func (Linearizability) Check(ctx context.Context, in *Input) record.Verdict {
	v, _ := judge(ctx, in, false)
	return v
}

// check implements drawer.
func (Linearizability) check(ctx context.Context, in *Input) (record.Verdict, []Visual) {
	return judge(ctx, in, in.Visualize)
}

// judge judges in's history and, when draw is set and the trial has a
// directory, draws the first key that cannot be linearized.
func judge(ctx context.Context, in *Input, draw bool) (record.Verdict, []Visual) {
	v := pass(NameLinearizability)
	keys, byKey, n := histories(in.Trial)
	if n == 0 {
		return v, nil
	}
	budget := in.LinearizabilityTimeout
	if budget <= 0 {
		budget = DefaultLinearizabilityTimeout
	}
	deadline := time.Now().Add(budget)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	var unknown []string
	for _, key := range keys {
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			unknown = append(unknown, key)
			continue
		}
		res := porcupine.CheckOperationsTimeout(kvModel, byKey[key], left)
		switch res {
		case porcupine.Ok:
			continue
		case porcupine.Unknown:
			unknown = append(unknown, key)
			continue
		}
		// Illegal.
		min := shrink(ctx, byKey[key], deadline)
		v.Failed = true
		v.Symptom = "history not linearizable"
		v.Evidence = append(v.Evidence, fmt.Sprintf("key %s: %d operations cannot be linearized; %d of them still cannot:", key, len(byKey[key]), len(min)))
		for _, op := range min {
			v.Evidence = append(v.Evidence, "  "+describeOp(op))
		}
		var visuals []Visual
		if draw && in.Trial.Dir != "" {
			if vis, err := visualize(key, byKey[key]); err == nil {
				visuals = append(visuals, vis)
				v.Evidence = append(v.Evidence, visualLine(in.Trial.Dir, vis))
			} else {
				v.Evidence = append(v.Evidence, "visualization failed: "+err.Error())
			}
		}
		v.Evidence = capEvidence(v.Evidence)
		return v, visuals
	}
	if len(unknown) > 0 {
		v.Unknown = true
		v.Symptom = "linearizability search timed out"
		v.Evidence = []string{fmt.Sprintf("no verdict within %s for keys %s", budget, strings.Join(unknown, ", "))}
	}
	return v, nil
}

// shrink removes operations from an illegal history one at a time while it
// stays illegal, within the deadline, and returns the rest in call order.
func shrink(ctx context.Context, ops []porcupine.Operation, deadline time.Time) []porcupine.Operation {
	cur := append([]porcupine.Operation(nil), ops...)
	const maxOps = 400
	if len(cur) > maxOps {
		return sortByCall(cur)
	}
	for i := 0; i < len(cur); {
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			break
		}
		try := append(append([]porcupine.Operation(nil), cur[:i]...), cur[i+1:]...)
		if porcupine.CheckOperationsTimeout(kvModel, try, left) == porcupine.Illegal {
			cur = try
			continue
		}
		i++
	}
	return sortByCall(cur)
}

func sortByCall(ops []porcupine.Operation) []porcupine.Operation {
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	return ops
}

func describeOp(o porcupine.Operation) string {
	m := o.Metadata.(opMeta)
	ret := "never returned"
	if !m.op.Unknown {
		ret = "returned " + clock(time.Unix(0, m.op.Return))
	}
	return fmt.Sprintf("%s %s, called %s, %s", m.client, kvModel.DescribeOperation(o.Input, o.Output), clock(time.Unix(0, m.op.Call)), ret)
}

// visualize draws porcupine's HTML visualization of key's history, to be
// written as the returned Visual's Name into the trial's directory.
func visualize(key string, ops []porcupine.Operation) (Visual, error) {
	_, info := porcupine.CheckOperationsVerbose(kvModel, ops, 10*time.Second)
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r == ' ' {
			return '_'
		}
		return r
	}, key)
	var html bytes.Buffer
	if err := porcupine.Visualize(kvModel, info, &html); err != nil {
		return Visual{}, fmt.Errorf("visualize %s: %w", key, err)
	}
	return Visual{Checker: NameLinearizability, Name: "linearizability-" + safe + ".html", Data: html.Bytes()}, nil
}
