// Command sieve runs a few of the node package's patterns, so that the
// instrumenter's tests can build the package with its timeout hooks.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"example.com/sieve/node"
)

func main() {
	f, err := os.Create(filepath.Join(os.TempDir(), "sieve-example"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	slow, err := node.Apply(f, []byte("x"))
	fmt.Println("slow:", slow, "err:", err)
	if _, err := node.Dial("127.0.0.1:1"); err == nil {
		fmt.Println("dialled")
	}
}
