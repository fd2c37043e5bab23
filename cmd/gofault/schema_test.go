package main

import (
	"bytes"
	"os"
	"testing"
)

// TestSchemaCommitted checks that docs/gofault.schema.json, which gofault
// init's template names, is what "gofault config schema" prints. After a
// change to the config types, or to the policies, checkers or fault kinds:
//
//	go run ./cmd/gofault config schema > docs/gofault.schema.json
func TestSchemaCommitted(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"config", "schema"}, &out, &errb); code != 0 {
		t.Fatalf("gofault config schema: exit %d\n%s", code, errb.String())
	}
	committed, err := os.ReadFile("../../docs/gofault.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), committed) {
		t.Errorf("docs/gofault.schema.json differs from gofault config schema; regenerate it with\n\tgo run ./cmd/gofault config schema > docs/gofault.schema.json")
	}
	for _, args := range [][]string{{"config"}, {"config", "scheme"}, {"config", "schema", "extra"}} {
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("gofault %v: exit %d, want 2", args, code)
		}
	}
}
