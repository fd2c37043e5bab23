package ownport

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestOwnPortAndTemp binds OWNPORT_PORT and claims a file in the temp
// dir, then, with OWNPORT_MEET set, writes what it got there and holds
// both until another process has written its own: two runs at once
// meet, so the second binds and claims while the first holds.
func TestOwnPortAndTemp(t *testing.T) {
	port := os.Getenv("OWNPORT_PORT")
	l, err := Listen(port)
	if err == nil {
		defer l.Close()
		err = Claim("claimed")
	}
	if meet := os.Getenv("OWNPORT_MEET"); meet != "" {
		got := fmt.Sprintf("port %s tmp %s err %v\n", port, os.TempDir(), err)
		if err := os.WriteFile(filepath.Join(meet, strconv.Itoa(os.Getpid())), []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if ents, _ := os.ReadDir(meet); len(ents) >= 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no other test process ran at once")
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
