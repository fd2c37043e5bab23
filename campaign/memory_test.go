package campaign

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/store"
)

func TestReleaseLine(t *testing.T) {
	for v, want := range map[string]string{
		"v3.7.4": "v3.7", "v3.7.0-rc.1": "v3.7", "v2.15": "v2.15", "v1.7.2": "v1.7", "": "", "latest": "latest",
	} {
		if got := releaseLine(v); got != want {
			t.Errorf("releaseLine(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestMemoryCampaigns(t *testing.T) {
	camp := func(id int64, name, version, policy string) *store.Campaign {
		var c config.Config
		c.Name, c.Target.Version = name, version
		b, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		return &store.Campaign{ID: id, Name: name, Policy: policy, Config: string(b)}
	}
	camps := []*store.Campaign{
		camp(1, "etcd", "v3.7.3", "random"),
		camp(2, "etcd", "v3.6.16", "random"), // another release line
		camp(3, "nats", "v3.7.4", "random"),  // another target
		camp(4, "etcd", "v3.7.4", "replay"),  // a replay repeats a trial
		camp(5, "etcd", "v3.7.4", "fuzz"),
		{ID: 6, Name: "etcd", Policy: "random", Config: "name: etcd"}, // a config stored before JSON
		camp(7, "etcd", "v3.7.4", "random"),                           // the campaign itself
		camp(8, "etcd", "v3.7.1", "portfolio"),
	}
	cfg := &config.Config{Name: "etcd"}
	cfg.Target.Version = "v3.7.4"
	tests := []struct {
		name      string
		forgotten int64
		want      []int64
	}{
		{"every earlier and later campaign of the line", 0, []int64{1, 5, 8}},
		{"after a reset at campaign 5", 5, []int64{8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := memoryCampaigns(camps, cfg, 7, tt.forgotten); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("memoryCampaigns = %v, want %v", got, tt.want)
			}
		})
	}
}
