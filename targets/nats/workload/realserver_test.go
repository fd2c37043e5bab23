package main

import (
	"testing"

	"github.com/gofault/gofault/targets/nats/repro"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startServer starts a real in-process nats-server with JetStream in a
// temporary dir, shut down when the test ends.
func startServer(t *testing.T) *server.Server {
	t.Helper()
	s, err := repro.StartServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

// connectJS connects to s with opts, closed when the test ends, and
// returns the connection and its JetStream context.
func connectJS(t *testing.T, s *server.Server, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}
