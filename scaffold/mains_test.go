package scaffold

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRankMains checks the node program's evidence order on module shapes
// seen in the wild: a main named after the module beats one whose name
// says server under unmaintained/; a main the build files build beats one
// whose name only says server; tools, tests and examples come last.
func TestRankMains(t *testing.T) {
	tests := []struct {
		name   string
		mod    string
		mains  []string
		built  map[string]string
		want   []string
		reason string // of the first
	}{
		{"named after the module", "github.com/acme/bigsvc",
			[]string{"./unmaintained/bigsvc_servers", "./tools/gen", "./cmd/bigsvc", "./cmd/bigsvcctl"}, nil,
			[]string{"./cmd/bigsvc", "./cmd/bigsvcctl", "./unmaintained/bigsvc_servers", "./tools/gen"}, "named after the module"},
		{"major version suffix, root main", "example.com/kv/v3",
			[]string{"./cmd/kvserver", "."}, nil,
			[]string{".", "./cmd/kvserver"}, "named after the module"},
		{"built by the Dockerfile", "example.com/platform",
			[]string{"./cmd/apiserver", "./cmd/orders"}, map[string]string{"./cmd/orders": "Dockerfile"},
			[]string{"./cmd/orders", "./cmd/apiserver"}, "built by Dockerfile"},
		{"demoted even when built", "example.com/platform",
			[]string{"./hack/server", "./cmd/x"}, map[string]string{"./hack/server": "Makefile"},
			[]string{"./cmd/x", "./hack/server"}, "no evidence: another main package"},
		{"name heuristics last", "example.com/svc",
			[]string{"./cmd/kvctl", "./cmd/kvd", "./internal/tools/lint", "./e2e/runner"}, nil,
			[]string{"./cmd/kvd", "./cmd/kvctl", "./e2e/runner", "./internal/tools/lint"}, "its name says server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rankMains(tt.mod, tt.mains, tt.built)
			var paths []string
			for _, m := range got {
				paths = append(paths, m.Path)
			}
			if !slices.Equal(paths, tt.want) {
				t.Errorf("order %v, want %v", paths, tt.want)
			}
			if got[0].Reason() != tt.reason {
				t.Errorf("first's reason %q, want %q", got[0].Reason(), tt.reason)
			}
		})
	}
}

func TestBuiltBy(t *testing.T) {
	mains := []string{"./cmd/kvd", "./cmd/kvctl", "."}
	tests := []struct {
		line string
		want []string
	}{
		{"go build -o bin/kvd ./cmd/kvd", []string{"./cmd/kvd"}},
		{"\tCGO_ENABLED=0 go build -o $(OUT)/kvd $(PKG)/cmd/kvd", []string{"./cmd/kvd"}},
		{"RUN go install example.com/kv/cmd/kvctl@latest", []string{"./cmd/kvctl"}},
		{"go install example.com/kv@latest", []string{"."}},
		{"COPY --from=build /go/bin/kvd /usr/local/bin/kvd", []string{"./cmd/kvd"}},
		{`ENTRYPOINT ["/usr/local/bin/kvd", "--data-dir=/data"]`, []string{"./cmd/kvd"}},
		{"go run ./cmd/kvctl put a b", nil},
		{"go build ./...", nil},
	}
	for _, tt := range tests {
		if got := builtBy(strings.TrimSpace(tt.line), "example.com/kv", mains); !slices.Equal(got, tt.want) {
			t.Errorf("builtBy(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

// TestBuildEvidence reads the testdata module's Dockerfile and README: the
// node program is built by the first, the unmaintained launcher installed
// by the second.
func TestBuildEvidence(t *testing.T) {
	got := buildEvidence(filepath.Join("testdata", "bigsvc"), "github.com/acme/bigsvc",
		[]string{"./cmd/bigsvc", "./unmaintained/bigsvc_servers", "./tools/gen"})
	if got["./cmd/bigsvc"] != "Dockerfile" || got["./unmaintained/bigsvc_servers"] != "README.md" || len(got) != 2 {
		t.Errorf("evidence %q", got)
	}
}
