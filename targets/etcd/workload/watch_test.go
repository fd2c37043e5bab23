package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/workload"
)

func TestWatcherChecks(t *testing.T) {
	type obs struct {
		rev int64
		key string
	}
	tests := []struct {
		name   string
		from   int64
		events []obs
		writes map[int64]string
		target int64
		want   []string // violation messages, in order
	}{
		{"in order, complete", 10, []obs{{10, "kv/a"}, {11, "kv/b"}, {13, "kv/a"}},
			map[int64]string{10: "kv/a", 11: "kv/b", 13: "kv/a"}, 13, nil},
		{"unknown writes may show up", 10, []obs{{10, "kv/a"}, {12, "kv/c"}},
			map[int64]string{10: "kv/a"}, 10, nil},
		{"duplicate", 10, []obs{{10, "kv/a"}, {10, "kv/a"}}, nil, 10,
			[]string{"watcher of n1/0 got revision 10 (key kv/a) twice (first for key kv/a)"}},
		{"out of order", 10, []obs{{12, "kv/a"}, {11, "kv/b"}}, nil, 12,
			[]string{"watcher of n1/0 got revision 11 (key kv/b) after revision 12"}},
		{"before start", 10, []obs{{9, "kv/a"}}, nil, 9,
			[]string{"watcher of n1/0 started at revision 10 got revision 9 (key kv/a)"}},
		{"gap", 10, []obs{{10, "kv/a"}, {13, "kv/a"}},
			map[int64]string{10: "kv/a", 11: "kv/b", 13: "kv/a"}, 13,
			[]string{"watcher of n1/0 skipped revision 11 (write of kv/b) but saw revision 13"}},
		{"lagging is not a gap", 10, []obs{{10, "kv/a"}},
			map[int64]string{10: "kv/a", 11: "kv/b"}, 11, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			env := workload.Env{Nodes: []workload.Node{{Name: "n1", Ports: map[string]int{"client": 1}}}}
			err := workload.Run(context.Background(), env, &out, func(ctx context.Context, wt *workload.T) error {
				c := &client{wc: wt.Client("n1")}
				w := newWatcher(c, tc.from)
				for _, o := range tc.events {
					w.observe(o.rev, o.key)
				}
				w.checkComplete(tc.writes, tc.target)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var ev record.ClientEvent
				if line == "" {
					continue
				}
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatal(err)
				}
				if ev.Kind == record.EvViolation {
					if ev.Checker != checkWatchOrder {
						t.Errorf("checker %q", ev.Checker)
					}
					got = append(got, ev.Msg)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
