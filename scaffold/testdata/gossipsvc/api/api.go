// Package api serves the HTTP API over the replicated state.
package api

import (
	"github.com/acme/gossipsvc/nflog"
	"github.com/acme/gossipsvc/silence"
)

// Serve serves.
func Serve() { silence.Set(); nflog.Log() }
