package build

import (
	"strings"
	"testing"

	"github.com/gofault/gofault/instrument"
)

func TestWriteCompileDropped(t *testing.T) {
	tests := []struct {
		ds   []instrument.Dropped
		want string
	}{
		{nil, ""},
		{[]instrument.Dropped{{ID: "p:f#1", What: "site", File: "/a/b.go", Line: 7, Reason: instrument.SkipNoErrResult}}, ""},
		{[]instrument.Dropped{{ID: "p:os.ReadDir#1", What: "site", File: "/a/b.go", Line: 7, Reason: instrument.SkipCompile,
			Errors: []string{"/a/b.go:7:3: undefined: fs.X", "/a/b.go:7:9: y"}}},
			"  dropped    site p:os.ReadDir#1 at /a/b.go:7: /a/b.go:7:3: undefined: fs.X; /a/b.go:7:9: y\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		writeCompileDropped(&b, tt.ds)
		if b.String() != tt.want {
			t.Errorf("writeCompileDropped(%+v) = %q, want %q", tt.ds, b.String(), tt.want)
		}
	}
}
