package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/internal/version"
)

func TestVersionCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("gofault version --json: exit %d\n%s", code, errb.String())
	}
	var v version.Info
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if v.Wire != wire.Version || v.Go == "" || v.Module == "" {
		t.Errorf("gofault version --json = %s", out.String())
	}
	out.Reset()
	if code := run([]string{"version"}, &out, &errb); code != 0 || out.String() != version.Current().String()+"\n" {
		t.Errorf("gofault version: exit %d, %q", code, out.String())
	}
	if code := run([]string{"version", "extra"}, &out, &errb); code != 2 {
		t.Errorf("gofault version extra: exit %d, want 2", code)
	}
}
