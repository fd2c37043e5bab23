package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/gofault/gofault/dashboard"
)

func init() {
	register(command{
		name:    "ui",
		summary: "serve a dashboard of the campaigns in a database (live while a campaign runs)",
		run:     runUI,
	})
}

func runUI(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("ui", os.Stderr)
	sf := addStoreFlags(fs)
	addr := fs.String("addr", "127.0.0.1:8750", "address to listen on (loopback by default; port 0 picks a free one)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	st, err := sf.open()
	if err != nil {
		return err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("%w: --addr %s: %v", errUsage, *addr, err)
	}
	srv := &http.Server{
		Handler:           (&dashboard.Server{Store: st, Replay: dashboard.Replayer(st, lockWork, logLevel())}).Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	fmt.Fprintf(stdout, "gofault ui: serving %s on http://%s/latest (Ctrl-C stops)\n", st.Path(), ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		return ctx.Err()
	}
}
