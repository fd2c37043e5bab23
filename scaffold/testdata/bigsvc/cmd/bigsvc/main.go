// Command bigsvc is the node program: named after the module, built by the
// Dockerfile.
package main

import "github.com/acme/bigsvc/server"

func main() { server.Run() }
