// Command gen is a code generator.
package main

func main() {}
