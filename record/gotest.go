package record

import (
	"strings"
	"time"
)

// testRan starts the phase event that names the Go test a gofault test
// trial ran ("ran TestName"); testClient ends its client's name
// ("n1/test").
const (
	testRan    = "ran "
	testClient = "/test"
)

// TestEvent is the client event by which a gofault test trial records
// that its process, node, ran test.
func TestEvent(at time.Time, node, test string) ClientEvent {
	return ClientEvent{Time: at, Client: node + testClient, Node: node, Kind: EvPhase, Msg: testRan + test}
}

// Test returns the Go test that trial t ran (its TestEvent), or "" when
// t is not a gofault test trial.
func (t *Trial) Test() string {
	for _, e := range t.Client {
		if e.Kind == EvPhase && strings.HasSuffix(e.Client, testClient) {
			if name, ok := strings.CutPrefix(e.Msg, testRan); ok {
				return name
			}
		}
	}
	return ""
}
