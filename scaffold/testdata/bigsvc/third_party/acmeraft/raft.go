// Package raft is the module's fork of hashicorp/raft, with a string role.
package raft

// Raft is one member.
type Raft struct{ state string }

// NewRaft starts a member.
func NewRaft(store any) *Raft { return &Raft{state: "follower"} }
