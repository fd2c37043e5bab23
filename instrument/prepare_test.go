package instrument

import (
	"strings"
	"testing"
)

func TestWorkModFile(t *testing.T) {
	in := `module example.com/m

go 1.25

require (
	example.com/a v1.0.0
	github.com/gofault/gofault/agent v0.0.0
)

replace example.com/a => ../a

replace example.com/b v1.2.0 => example.com/c v1.3.0

replace github.com/gofault/gofault/agent => ./agent
`
	out, err := workModFile([]byte(in), "/src/m")
	if err != nil {
		t.Fatal(err)
	}
	out, err = addReplacements(out, "/work/go.mod", map[string]string{
		AgentModule:     "/work/agent",
		"example.com/d": "/work/mod/example.com/d@v1.0.0",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{
		"replace example.com/a => /src/a\n",
		"replace example.com/b v1.2.0 => example.com/c v1.3.0\n",
		"replace github.com/gofault/gofault/agent => /work/agent\n",
		"replace example.com/d => /work/mod/example.com/d@v1.0.0\n",
		"example.com/d v0.0.0\n",
		"github.com/gofault/gofault/agent v0.0.0\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("work go.mod lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "./agent") || strings.Count(got, AgentModule+" =>") != 1 {
		t.Errorf("the user's agent replacement survived:\n%s", got)
	}
}

func TestGoEnv(t *testing.T) {
	got := goEnv([]string{"HOME=/h", "GOWORK=/w/go.work", "GOFLAGS=-mod=vendor -trimpath -modfile=x"})
	want := []string{"HOME=/h", "GOFLAGS=-trimpath", "GOWORK=off"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("goEnv = %q, want %q", got, want)
	}
}
