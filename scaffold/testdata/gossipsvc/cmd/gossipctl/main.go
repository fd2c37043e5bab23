// Command gossipctl is the client tool.
package main

func main() {}
