// Command node runs one store node.
package main

import (
	"fmt"
	"net"
	"os"

	"example.com/app/peer"
	"example.com/app/store"
)

func main() {
	s, err := store.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := peer.Fetch(s, "k"); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(1)
	}
	if _, _, err := store.Sum([]byte("x")); err != nil {
		os.Exit(1)
	}
	if _, err := store.Render(nil); err != nil {
		os.Exit(1)
	}
	if _, err := peer.Parse("ab"); err != nil {
		os.Exit(1)
	}
	if err := s.Load(); err != nil {
		os.Exit(1)
	}
	if err := s.PutBatch(nil); err != nil {
		os.Exit(1)
	}
	_ = peer.Serve(ln, s)
	_, _ = peer.Send("127.0.0.1:1", nil)
	if b, err := store.ReadMeta(os.Args[1] + "/meta"); err == nil {
		_ = store.WriteMeta(os.Args[1]+"/meta", b)
	}
	_ = s.Close()
	_ = peer.ErrClosed
	_ = peer.Handler(s)
}
