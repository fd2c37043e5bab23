package fleet

// The connection to the NATS server, and the server a coordinator embeds
// when none answers at its address.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Auth is how a client proves itself to the server: a token (the one
// an embedded server requires), or a NATS credentials file (for a server
// run with accounts). Both empty: none, for a trusted network only.
type Auth struct {
	Token string
	Creds string
}

func (a Auth) options() []nats.Option {
	var opts []nats.Option
	if a.Token != "" {
		opts = append(opts, nats.Token(a.Token))
	}
	if a.Creds != "" {
		opts = append(opts, nats.UserCredentials(a.Creds))
	}
	return opts
}

// Conn is a connection to the server with JetStream, and the server
// itself when this process embeds it.
type Conn struct {
	NC  *nats.Conn
	JS  jetstream.JetStream
	srv *server.Server
}

// Embedded reports whether this process runs the server.
func (c *Conn) Embedded() bool { return c.srv != nil }

// Close drains the connection and shuts an embedded server down.
func (c *Conn) Close() {
	c.NC.Close()
	if c.srv != nil {
		c.srv.Shutdown()
		c.srv.WaitForShutdown()
	}
}

// Dial connects to the server at addr (nats://HOST:PORT). With embedDir
// set (a coordinator), a server with JetStream is started at that address,
// its data in embedDir, when none answers there; it requires auth.Token
// when one is given (credentials files need a server of its own).
func Dial(addr string, auth Auth, embedDir string, log *slog.Logger) (*Conn, error) {
	if log == nil {
		log = slog.Default()
	}
	opts := append(auth.options(), nats.Name("gofault"), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second))
	nc, err := nats.Connect(addr, opts...)
	var srv *server.Server
	if err != nil && embedDir != "" && errors.Is(err, nats.ErrNoServers) {
		if srv, err = embed(addr, auth, embedDir); err != nil {
			return nil, err
		}
		log.Info("queue: no server answered, started one", "addr", addr, "store", embedDir)
		nc, err = nats.Connect(addr, opts...)
	}
	if err != nil {
		if srv != nil {
			srv.Shutdown()
		}
		return nil, fmt.Errorf("queue %s: %w", addr, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		if srv != nil {
			srv.Shutdown()
		}
		return nil, fmt.Errorf("queue %s: jetstream: %w", addr, err)
	}
	return &Conn{NC: nc, JS: js, srv: srv}, nil
}

// embed starts a JetStream server listening at addr.
func embed(addr string, auth Auth, dir string) (*server.Server, error) {
	u, err := url.Parse(addr)
	if err != nil || u.Scheme != "nats" {
		return nil, fmt.Errorf("queue %s: want nats://HOST:PORT", addr)
	}
	host, portText, err := net.SplitHostPort(u.Host)
	if err != nil {
		return nil, fmt.Errorf("queue %s: %w", addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("queue %s: port: %w", addr, err)
	}
	if auth.Creds != "" && auth.Token == "" {
		return nil, fmt.Errorf("queue %s: no server answers, and an embedded server takes a --queue-token, not a credentials file", addr)
	}
	srv, err := server.NewServer(&server.Options{
		Host: host, Port: port, JetStream: true, StoreDir: dir,
		Authorization: auth.Token, NoSigs: true, NoLog: true,
		MaxPayload: 8 << 20,
	})
	if err != nil {
		return nil, fmt.Errorf("queue %s: server: %w", addr, err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("queue %s: the embedded server did not start", addr)
	}
	return srv, nil
}

// setup makes the stream and the bucket if missing.
func setup(ctx context.Context, js jetstream.JetStream) (jetstream.Stream, jetstream.ObjectStore, error) {
	st, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: Stream, Subjects: []string{"gofault.trials.>"}, Retention: jetstream.WorkQueuePolicy,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("queue: stream %s: %w", Stream, err)
	}
	obj, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: Bucket})
	if err != nil {
		return nil, nil, fmt.Errorf("queue: object store %s: %w", Bucket, err)
	}
	return st, obj, nil
}
