// Command node runs the states testdata's goroutines for a moment, so an
// instrumented build executes its state hooks.
package main

import (
	"fmt"
	"time"

	"example.com/states/kv"
	"example.com/states/raft"
)

func main() {
	n := raft.NewNode(1)
	n.Start()
	s := kv.NewStore()
	s.Watch()
	s.Put()
	time.Sleep(50 * time.Millisecond)
	fmt.Println(n.Status())
}
