// Command app exercises the store: the main package of the instrument tests.
package main

import (
	"fmt"
	"os"

	"example.com/app/store"
	"golang.org/x/mod/semver"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: app DIR")
		os.Exit(2)
	}
	s := &store.Store{Dir: os.Args[1]}
	for i, v := range []string{"alpha\nbeta\n", "gamma\n", "delta"} {
		if err := s.Put(fmt.Sprintf("k%d", i), v); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
	}
	n, err := s.Lines("k0")
	fmt.Println("lines", n, err)
	if err := s.Dump(os.Stdout); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	_, err = s.Get("missing")
	fmt.Println("missing:", err != nil)
	fmt.Println(s.Where())
	fmt.Println("semver", semver.Compare("v1.2.0", "v1.10.0"))
}
