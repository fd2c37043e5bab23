package config

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestJSONSchema checks that the schema describes every settable field
// (Fields) with its type, refuses unknown fields, carries the doc comments
// and the enums.
func TestJSONSchema(t *testing.T) {
	out, err := JSONSchema(Known{Policies: []string{"random", "bsrr"}, Checkers: []string{"crash", "hang"}})
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(out, &root); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	// lookup returns the schema at a dotted path.
	lookup := func(path string) map[string]any {
		s := root
		for _, seg := range strings.Split(path, ".") {
			props, _ := s["properties"].(map[string]any)
			next, ok := props[seg].(map[string]any)
			if !ok {
				return nil
			}
			s = next
		}
		return s
	}
	for _, p := range Fields() {
		s := lookup(p)
		if s == nil {
			t.Errorf("schema lacks %s", p)
			continue
		}
		if s["type"] == nil {
			t.Errorf("%s has no type: %v", p, s)
		}
		if s["type"] == "object" && s["properties"] != nil && s["additionalProperties"] != false {
			t.Errorf("%s accepts unknown fields", p)
		}
	}
	for _, tt := range []struct {
		path, key string
		want      any
	}{
		{"cluster.nodes", "type", "integer"},
		{"cluster.ready.timeout", "type", "string"},
		{"faults.coverage", "type", "boolean"},
		{"cluster.env", "type", "object"},
		{"policy.name", "enum", []any{"random", "bsrr"}},
		{"cluster.shutdown.order", "enum", []any{"parallel", "sequential", "leader-last"}},
	} {
		s := lookup(tt.path)
		if got, _ := json.Marshal(s[tt.key]); string(got) != mustJSON(t, tt.want) {
			t.Errorf("%s %s = %s, want %s", tt.path, tt.key, got, mustJSON(t, tt.want))
		}
	}
	if d, _ := lookup("cluster.nodes")["description"].(string); d != "nodes is the number of node processes (default 3)." {
		t.Errorf("cluster.nodes description %q", d)
	}
	if d, _ := lookup("cluster.shutdown.signal")["description"].(string); d != `default "SIGTERM"` {
		t.Errorf("cluster.shutdown.signal description %q (a field's line comment)", d)
	}
	if root["additionalProperties"] != false || root["$id"] != SchemaURL {
		t.Errorf("root: additionalProperties %v, $id %v", root["additionalProperties"], root["$id"])
	}
	kinds := lookup("faults.kinds")["items"].(map[string]any)["enum"].([]any)
	if len(kinds) != len(FaultKinds) || !slices.Contains(kinds, any("powerloss")) {
		t.Errorf("faults.kinds items enum %v, want FaultKinds", kinds)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDurationPattern checks the schema's duration patterns against what
// the config accepts.
func TestDurationPattern(t *testing.T) {
	durationRE, boundRE := regexp.MustCompile(durationRegexp), regexp.MustCompile(boundRegexp)
	for _, tt := range []struct {
		s          string
		dur, bound bool
	}{
		{"30s", true, true},
		{"1m30s", true, true},
		{"1.5s", true, true},
		{"250ms", true, true},
		{"0", true, true},
		{"auto", false, true},
		{"30", false, false},
		{"3 s", false, false},
		{"soon", false, false},
	} {
		if got := durationRE.MatchString(tt.s); got != tt.dur {
			t.Errorf("duration %q: match %v, want %v", tt.s, got, tt.dur)
		}
		if got := boundRE.MatchString(tt.s); got != tt.bound {
			t.Errorf("bound %q: match %v, want %v", tt.s, got, tt.bound)
		}
	}
}
