package workload

import (
	"strings"
	"testing"
	"time"
)

func TestSettings(t *testing.T) {
	env := map[string]string{"D": "1500ms", "N": "7", "S": "peer", "BADD": "-1s", "BADN": "x"}
	get := func(k string) string { return env[k] }
	tests := []struct {
		name    string
		read    func(*Settings) any
		want    any
		wantErr string
	}{
		{"duration", func(s *Settings) any { return s.Duration("D", time.Second) }, 1500 * time.Millisecond, ""},
		{"duration default", func(s *Settings) any { return s.Duration("NONE", time.Second) }, time.Second, ""},
		{"bad duration", func(s *Settings) any { return s.Duration("BADD", time.Second) }, time.Second, `BADD="-1s": want a positive duration`},
		{"int", func(s *Settings) any { return s.Int("N", 1) }, 7, ""},
		{"bad int", func(s *Settings) any { return s.Int("BADN", 1) }, 1, `BADN="x": want a positive integer`},
		{"string", func(s *Settings) any { return s.String("S", "client") }, "peer", ""},
		{"string default", func(s *Settings) any { return s.String("NONE", "client") }, "client", ""},
		{"kv", func(s *Settings) any {
			return s.KV(KVVars{Duration: "D", Recovery: "NONE", Keys: "N", Rate: "NONE", Port: "S"}, KVConfig{Recovery: 8 * time.Second, Keys: 5, Rate: 40, Port: "http"})
		}, KVConfig{Duration: 1500 * time.Millisecond, Recovery: 8 * time.Second, Keys: 7, Rate: 40, Port: "peer"}, ""},
		{"kv with a bad rate", func(s *Settings) any {
			return s.KV(KVVars{Duration: "D", Recovery: "D", Keys: "N", Rate: "BADN", Port: "S"}, KVConfig{Rate: 40}).Rate
		}, 40, `BADN="x": want a positive integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSettings(get)
			if got := tt.read(s); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if err := s.Err(); (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Err() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
