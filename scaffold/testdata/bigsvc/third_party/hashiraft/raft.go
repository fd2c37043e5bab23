// Package raft stands in for hashicorp/raft: go.mod requires it, only the
// unmaintained main imports it.
package raft

// Raft is one member.
type Raft struct{}

// NewRaft starts a member.
func NewRaft(store any) *Raft { return &Raft{} }
