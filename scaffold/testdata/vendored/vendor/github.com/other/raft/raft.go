// Package raft is a vendored copy of a raft library shaped like
// etcd-io/raft: a RawNode and StartNode.
package raft

// RawNode is one member's state machine.
type RawNode struct{}

// StartNode starts a member.
func StartNode() *RawNode { return &RawNode{} }
