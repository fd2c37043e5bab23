// Command node runs a member on the vendored raft.
package main

import "github.com/other/raft"

func main() { _ = raft.StartNode() }
