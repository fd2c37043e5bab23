package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/gofault/gofault/workdir"
)

func TestParseInterleaved(t *testing.T) {
	tests := []struct {
		args    []string
		pos     string
		json    bool
		db      string
		wantErr bool
	}{
		{[]string{"1-7"}, "[1-7]", false, "", false},
		{[]string{"--json", "--db", "x.db", "1-7"}, "[1-7]", true, "x.db", false},
		{[]string{"1-7", "--json"}, "[1-7]", true, "", false},
		{[]string{"--db", "x.db", "1-7", "--json", "2-3"}, "[1-7 2-3]", true, "x.db", false},
		{[]string{"1-7", "--nope"}, "", false, "", true},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("replay", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		asJSON := fs.Bool("json", false, "")
		db := fs.String("db", "", "")
		pos, err := parseInterleaved(fs, tt.args)
		if (err != nil) != tt.wantErr {
			t.Errorf("%q: err %v", tt.args, err)
			continue
		}
		if err == nil && (fmt.Sprint(pos) != tt.pos || *asJSON != tt.json || *db != tt.db) {
			t.Errorf("%q: positional %v json %v db %q; want %s %v %q", tt.args, pos, *asJSON, *db, tt.pos, tt.json, tt.db)
		}
	}
}

// TestCountFlags checks that the count flags of run and compare refuse
// counts below 1 with the fix, instead of falling back to the config.
func TestCountFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--trials", "-1"}, `invalid value "-1" for flag -trials: must be at least 1 (got -1)`},
		{[]string{"run", "--trials", "0"}, `invalid value "0" for flag -trials: must be at least 1 (got 0)`},
		{[]string{"run", "--parallel", "0"}, `invalid value "0" for flag -parallel: must be at least 1 or auto (0 only with --queue`},
		{[]string{"compare", "--parallel", "0"}, `invalid value "0" for flag -parallel: must be at least 1 or auto`},
		{[]string{"run", "--parallel", "-3"}, `invalid value "-3" for flag -parallel: want "auto" or a number of clusters of at least 1`},
		{[]string{"compare", "--seeds", "0"}, `invalid value "0" for flag -seeds: must be at least 1`},
		{[]string{"compare", "--trials", "two"}, `invalid value "two" for flag -trials: want a whole number`},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("gofault %s: exit %d, stderr:\n%s\nwant exit 2 and %q", strings.Join(tc.args, " "), code, errb.String(), tc.want)
		}
	}
}

// TestWorkDirInUse checks that the commands that write to a work dir
// refuse one another gofault process holds, at once, naming the holder.
func TestWorkDirInUse(t *testing.T) {
	work := t.TempDir()
	release, err := workdir.Lock(work, "gofault run --config other.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	cfg := "../../examples/minikv/gofault.yaml"
	for _, args := range [][]string{
		{"run", "--config", cfg, "--set", "workdir=" + work},
		{"build", "--config", cfg, "--set", "workdir=" + work},
		{"compare", "--config", cfg, "--set", "workdir=" + work},
		{"bench", "--config", cfg, "--bugs", "../../examples/minikv/bugs.yaml", "--set", "workdir=" + work},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 1 || !strings.Contains(errb.String(), "is used by gofault run --config other.yaml (PID") {
			t.Errorf("gofault %s: exit %d, stderr %q", strings.Join(args, " "), code, errb.String())
		}
	}
}
