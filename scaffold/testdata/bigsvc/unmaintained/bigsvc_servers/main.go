// Command bigsvc_servers is an old launcher on hashicorp/raft: its name says
// server, but it lies under unmaintained/.
package main

import "github.com/hashicorp/raft"

func main() { _ = raft.NewRaft(nil) }
