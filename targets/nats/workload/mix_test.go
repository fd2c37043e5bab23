package main

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseMix(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "publish=3,kv-get=1", want: "publish=3,kv-get=1"},
		{in: " purge=1 , object=2", want: "purge=1,object=2"},
		{in: "publish=0,scale=5", want: "scale=5"},
		{in: "publish=1,nope=2", err: "want op=weight"},
		{in: "publish", err: "want op=weight"},
		{in: "publish=-1", err: "want op=weight"},
		{in: "publish=0", err: "all weights are 0"},
	} {
		m, err := parseMix(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseMix(%q) = %v, want error %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("parseMix(%q): %v", tc.in, err)
		case m.String() != tc.want:
			t.Errorf("parseMix(%q) = %s, want %s", tc.in, m.String(), tc.want)
		}
	}
}

// TestMixPick: pick draws only weighted operations, about in proportion.
func TestMixPick(t *testing.T) {
	m, err := parseMix("publish=3,kv-update=1")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	n := map[int]int{}
	for range 4000 {
		n[m.pick(rng)]++
	}
	if len(n) != 2 || n[opPublish] < 2700 || n[opPublish] > 3300 {
		t.Errorf("pick drew %v, want about 3000 publish and 1000 kv-update", n)
	}
}

// TestDefaultMixUsesEveryOperation: the default mix exercises the whole API.
func TestDefaultMixUsesEveryOperation(t *testing.T) {
	for op, w := range defaultMix {
		if w == 0 {
			t.Errorf("default mix leaves %s out", opNames[op])
		}
	}
	cfg, err := loadConfig(func(k string) string {
		if k == "NATS_WORKLOAD_MIX" {
			return "kv-get=1"
		}
		return ""
	})
	if err != nil || cfg.mix.String() != "kv-get=1" {
		t.Errorf("NATS_WORKLOAD_MIX=kv-get=1: mix %s, err %v", cfg.mix.String(), err)
	}
	if _, err := loadConfig(func(k string) string {
		if k == "NATS_WORKLOAD_MIX" {
			return "bogus=1"
		}
		return ""
	}); err == nil {
		t.Error("NATS_WORKLOAD_MIX=bogus=1 accepted")
	}
}
