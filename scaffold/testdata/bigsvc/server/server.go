// Package server runs one member on the fork of the raft library.
package server

import (
	"github.com/acme/bigsvc/storage"
	"github.com/acme/raft"
)

// Run starts the member.
func Run() { _ = raft.NewRaft(storage.Open()) }
