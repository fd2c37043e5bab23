package main

import (
	"flag"
	"fmt"
	"io"
	"testing"
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
