package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gofault/gofault/store"
)

func TestForgetAndReportMemory(t *testing.T) {
	ctx := context.Background()
	dir, db, st, cid := minikvStore(t)
	st.Close()
	cfg := []string{"--db", db, "--config", "../../examples/minikv/gofault.yaml", "--set", "workdir=" + dir}

	var out, errb bytes.Buffer
	if code := run(append([]string{"forget"}, cfg...), &out, &errb); code != 0 {
		t.Fatalf("forget: exit %d: %s", code, errb.String())
	}
	if want := "The next campaigns of minikv start without the memory of campaigns up to 1 "; !strings.HasPrefix(out.String(), want) || cid != 1 {
		t.Errorf("forget said %q; want it to start %q", out.String(), want)
	}
	st, err := store.OpenExisting(db)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := st.Forgotten(ctx, "minikv", ""); err != nil || f != cid {
		t.Errorf("Forgotten = %d, %v; want %d", f, err, cid)
	}
	st.Close()

	// The memory names faults by the last build's catalog: without a
	// build, report --memory says so.
	out.Reset()
	errb.Reset()
	if code := run(append([]string{"report", "--memory"}, cfg...), &out, &errb); code != 1 || !strings.Contains(errb.String(), "the catalog of the target's last build") {
		t.Errorf("report --memory without a build: exit %d, %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"forget", "extra"}, &out, &errb); code != 2 {
		t.Errorf("forget with an argument: exit %d, want 2 (%s)", code, errb.String())
	}
}
