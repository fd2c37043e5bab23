package check

import (
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func TestKillsAllowance(t *testing.T) {
	t0 := time.Unix(1000, 0)
	bound := 2 * time.Second
	tr := &record.Trial{Injections: []record.Injection{
		{Time: t0, Kind: catalog.KindCrash},
		{Time: t0.Add(time.Second), Kind: catalog.KindPowerLoss},
		{Time: t0.Add(1500 * time.Millisecond), Kind: catalog.KindDelay, Delay: time.Second},
		{Time: t0.Add(10 * time.Second), Kind: catalog.KindCrash},
	}}
	for _, tc := range []struct {
		from, to time.Duration
		want     time.Duration
	}{
		{100 * time.Millisecond, 3 * time.Second, bound}, // two kills: one more failover
		{3 * time.Second, 5 * time.Second, 0},            // one kill (the second, within a bound before)
		{0, 11 * time.Second, 2 * bound},                 // three
		{-5 * time.Second, -4 * time.Second, 0},          // none
	} {
		if got := killsAllowance(tr, t0.Add(tc.from), t0.Add(tc.to), bound); got != tc.want {
			t.Errorf("[%v, %v]: %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}
