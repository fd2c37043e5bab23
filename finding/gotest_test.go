package finding

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
)

// TestKindNames checks that every fault kind is written as its catalog
// constant: the constant's name is "Kind" and the kind's name.
func TestKindNames(t *testing.T) {
	for k := catalog.KindError; k <= catalog.KindPowerLossAfter; k <<= 1 {
		want := "Kind" + strings.ReplaceAll(k.String(), "-", "")
		if n := kindNames[k]; !strings.EqualFold(n, want) {
			t.Errorf("kind %s is written as %q, want the constant %s", k, n, want)
		}
	}
}

func TestDurationLit(t *testing.T) {
	for d, want := range map[time.Duration]string{
		3 * time.Second: "3 * time.Second", 1500 * time.Millisecond: "1500 * time.Millisecond",
		7 * time.Microsecond: "7 * time.Microsecond", 5: "time.Duration(5)",
	} {
		if got := durationLit(d); got != want {
			t.Errorf("durationLit(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestPackageOf(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := PackageOf(dir); err == nil || !strings.Contains(err.Error(), "--package") {
		t.Errorf("an empty dir: %v, want an error naming --package", err)
	}
	write("kv.go", "// Package kv.\npackage kv\n")
	if p, err := PackageOf(dir); p != "kv" || err != nil {
		t.Errorf("PackageOf = %q, %v; want kv", p, err)
	}
	write("z_test.go", "package kv_test\n")
	if p, err := PackageOf(dir); p != "kv_test" || err != nil {
		t.Errorf("PackageOf = %q, %v; want the tests' kv_test", p, err)
	}
}
