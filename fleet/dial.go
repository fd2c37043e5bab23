package fleet

import (
	"cmp"
	"context"
	"log/slog"
)

// DialCoordinator connects to the server at addr (Dial: an embedded one,
// keeping its data in embedDir, when none answers; opts.Log logs, or
// slog.Default) and starts a coordinator on it with opts; stop closes the
// coordinator, then the connection.
func DialCoordinator(ctx context.Context, addr string, auth Auth, embedDir string, opts CoordinatorOptions) (co *Coordinator, stop func(), err error) {
	conn, err := Dial(addr, auth, embedDir, cmp.Or(opts.Log, slog.Default()))
	if err != nil {
		return nil, nil, err
	}
	co, err = NewCoordinator(ctx, conn, opts)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return co, func() { co.Close(); conn.Close() }, nil
}
