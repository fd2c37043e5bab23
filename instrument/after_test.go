package instrument

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/policy"
)

// TestCrashAfterApp builds the testdata app with its first file write
// (store.Put's f.Write) able to crash before and after the call, and
// kills the program there through a real controller: a crash at the call
// leaves the key's file created and empty, a crash after it leaves the
// write's bytes in the file (the page cache: no power loss), and in both
// the program never got to its next key.
func TestCrashAfterApp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	res := buildApp(t, t.TempDir(), func(cat *catalog.Catalog) {
		for i := range cat.Sites {
			if s := &cat.Sites[i]; s.Callee == "f.Write" {
				s.Kind |= catalog.KindCrash | catalog.KindCrashAfter
				s.IO = "disk"
			}
		}
	})
	var site *catalog.Site
	for i := range res.Catalog.Sites {
		if s := &res.Catalog.Sites[i]; s.Callee == "f.Write" && s.Kind.Has(catalog.KindCrashAfter) {
			site = s
			break
		}
	}
	if site == nil {
		t.Fatal("no f.Write site that can crash after its call in the built catalog")
	}
	for _, tc := range []struct {
		kind catalog.Kind
		want string // k0's content after the kill
	}{
		{catalog.KindCrash, ""},
		{catalog.KindCrashAfter, "alpha\nbeta\n"},
	} {
		t.Run(tc.kind.String(), func(t *testing.T) {
			pol := &onePolicy{site: site.Index, fault: policy.Fault{Kind: tc.kind}}
			c, err := controller.Listen("unix", filepath.Join(t.TempDir(), "c.sock"), controller.Options{Catalog: res.Catalog, Policy: pol})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var proc atomic.Pointer[os.Process]
			killed := make(chan struct{}, 1)
			tr, err := c.BeginTrial(controller.TrialSpec{ID: "t1", Nodes: []string{"n1"}, Crash: func(string) {
				if p := proc.Load(); p != nil {
					// Said before the kill: Wait returns as soon as the
					// process dies, and the check below must see it.
					select {
					case killed <- struct{}{}:
					default:
					}
					_ = p.Kill()
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			tr.Arm()
			dir := t.TempDir()
			cmd := exec.Command(res.Binary, dir)
			cmd.Env = append(os.Environ(), "GOFAULT_CONTROLLER="+c.Addr(), "GOFAULT_NODE=n1", "GOFAULT_TRIAL=t1")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			proc.Store(cmd.Process)
			werr := cmd.Wait()
			rec := tr.End()
			select {
			case <-killed:
			default:
				t.Fatalf("the controller killed nothing (exit %v)", werr)
			}
			if len(rec.Injections) != 1 || rec.Injections[0].Kind != tc.kind || pol.got != 1 {
				t.Fatalf("injections %+v, policy asked %d times; want one %v", rec.Injections, pol.got, tc.kind)
			}
			got, err := os.ReadFile(filepath.Join(dir, "k0"))
			if err != nil {
				t.Fatalf("k0: %v (os.Create ran before the write)", err)
			}
			if string(got) != tc.want {
				t.Errorf("k0 holds %q after the kill, want %q", got, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "k1")); !os.IsNotExist(err) {
				t.Errorf("k1 exists (%v): the program went on past the kill", err)
			}
		})
	}
}
