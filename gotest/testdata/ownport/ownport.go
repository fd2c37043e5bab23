// Package ownport binds a port and creates a file of a fixed name in the
// temp dir: what two test processes run at once collide on unless each
// has its own (gofault test gives each its own ports and TMPDIR). Its
// test reads the port from OWNPORT_PORT, which a campaign maps to the
// process's own: --env 'OWNPORT_PORT=${GOFAULT_TEST_PORT}'.
package ownport

import (
	"net"
	"os"
	"path/filepath"
)

// Listen binds 127.0.0.1:port.
func Listen(port string) (net.Listener, error) {
	return net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
}

// Claim creates name in the temp dir, and fails if it is there already.
func Claim(name string) error {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}
