// Command node runs the NATS-shaped testdata's messages through their
// hooks.
package main

import (
	"fmt"

	"example.com/observenats/server"
)

func main() { fmt.Println(server.Run()) }
