// Command node runs the raft testdata's messages through their hooks.
package main

import (
	"fmt"

	"example.com/observehraft/raft"
)

func main() { fmt.Println(raft.Run()) }
