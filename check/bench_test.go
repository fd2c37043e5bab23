package check

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gofault/gofault/record"
)

// etcdSizedHistory is a linearizable history shaped like the etcd
// workload's: 3 clients, 5 keys, ops of 2 ms with overlap, a few unknown.
func etcdSizedHistory(n int) *record.Trial {
	b := newTrial("n1", "n2", "n3")
	rng := rand.New(rand.NewPCG(1, 2))
	state := map[string]string{}
	ms := 0
	for i := 0; i < n; i++ {
		client := fmt.Sprintf("n%d/0", i%3+1)
		key := fmt.Sprintf("kv/k%d", rng.IntN(5))
		// Sequential real time keeps it linearizable; every client's op
		// overlaps the previous one's return by sharing its end time.
		switch rng.IntN(4) {
		case 0:
			b.tr.Client = append(b.tr.Client, opEv(client, "get", key, "", "", state[key], ms, ms+2, false))
		case 1:
			v := fmt.Sprint("v", i)
			b.tr.Client = append(b.tr.Client, opEv(client, "put", key, v, "", "", ms, ms+2, i%50 == 0))
			state[key] = v
		case 2:
			b.tr.Client = append(b.tr.Client, opEv(client, "delete", key, "", "", "", ms, ms+2, false))
			state[key] = ""
		case 3:
			v := fmt.Sprint("v", i)
			b.tr.Client = append(b.tr.Client, opEv(client, "cas", key, v, state[key], "true", ms, ms+2, false))
			state[key] = v
		}
		ms += 2
	}
	return &b.tr
}

// BenchmarkLinearizability measures the check of a 600-op history, the
// size of a 3 s etcd trial.
func BenchmarkLinearizability(b *testing.B) {
	tr := etcdSizedHistory(600)
	in := &Input{Trial: tr}
	for b.Loop() {
		v := Linearizability{}.Check(context.Background(), in)
		if v.Failed || v.Unknown {
			b.Fatalf("%+v", v)
		}
	}
}

// BenchmarkHang measures the stall analysis over 2,000 client events.
func BenchmarkHang(b *testing.B) {
	tr := healthy().progress("n1/0", 0, 60000, 100).tr
	in := &Input{Trial: &tr}
	for b.Loop() {
		if v := (Hang{}).Check(context.Background(), in); v.Failed {
			b.Fatal(v)
		}
	}
}
