// Package nflog is state replicated through cluster.
package nflog

import "github.com/acme/gossipsvc/cluster"

// Log records a notification and broadcasts it.
func Log() { cluster.Join() }
