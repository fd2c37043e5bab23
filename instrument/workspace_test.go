package instrument

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkspaceReplacements(t *testing.T) {
	mods := map[string]string{
		"/src/targets/raft": "example.com/g/targets/raft",
		"/src":              "example.com/g",
		"/src/agent":        AgentModule,
		"/elsewhere/lib":    "example.com/lib",
	}
	modulePath := func(dir string) (string, error) {
		if p, ok := mods[dir]; ok {
			return p, nil
		}
		return "", fmt.Errorf("no go.mod in %s", dir)
	}
	tests := []struct {
		name, work string
		want       []string // path@version => new
		wantErr    string
	}{
		{
			name: "gofault's target layout",
			work: "go 1.26.0\nuse (\n\t.\n\t../..\n\t../../agent\n)\nreplace (\n\texample.com/g v0.1.0 => ../..\n\t" + AgentModule + " v0.1.0 => ../../agent\n)\n",
			// The main module and the agent are left out; the versioned
			// replace of a used module adds nothing.
			want: []string{"example.com/g@ => /src"},
		},
		{
			name: "other replacements kept, relative to the go.work",
			work: "go 1.26.0\nuse ../../../elsewhere/lib\nreplace example.com/x v1.0.0 => example.com/y v1.1.0\nreplace example.com/z => ./z\n",
			want: []string{"example.com/lib@ => /elsewhere/lib", "example.com/x@v1.0.0 => example.com/y@v1.1.0", "example.com/z@ => /src/targets/raft/z"},
		},
		{
			name:    "a used directory without a module",
			work:    "go 1.26.0\nuse ./missing\n",
			wantErr: "no go.mod",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repl, sums, err := workspaceReplacements("/src/targets/raft/go.work", []byte(tt.work), "/src/targets/raft", modulePath)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range repl {
				nv := ""
				if r.NewVersion != "" {
					nv = "@" + r.NewVersion
				}
				got = append(got, r.Path+"@"+r.Version+" => "+r.NewPath+nv)
			}
			if strings.Join(got, "; ") != strings.Join(tt.want, "; ") {
				t.Errorf("replacements = %q, want %q", got, tt.want)
			}
			if len(sums) == 0 || sums[0] != "/src/targets/raft/go.work.sum" {
				t.Errorf("sums = %q, want the go.work.sum first", sums)
			}
		})
	}
}

func TestApplyWorkspace(t *testing.T) {
	in := "module example.com/g/targets/raft\n\ngo 1.26.0\n\nrequire example.com/g v0.1.0\n\nreplace example.com/g v0.1.0 => example.com/g v0.0.9\n\nreplace example.com/q => ../q\n"
	out, err := applyWorkspace([]byte(in), "/work/go.mod", []workReplace{{Path: "example.com/g", NewPath: "/src"}})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"replace example.com/g => /src\n", "replace example.com/q => ../q\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("work go.mod lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "v0.0.9") {
		t.Errorf("the go.mod's own replacement of a workspace module survived:\n%s", got)
	}
	// The agent, whatever a workspace said, is the running gofault's.
	out, err = addReplacements(out, "/work/go.mod", map[string]string{AgentModule: "/work/agent"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "replace "+AgentModule+" => /work/agent\n") {
		t.Errorf("agent not replaced by the work dir's:\n%s", out)
	}
}

func TestMergeSums(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "go.sum")
	if err := os.WriteFile(other, []byte("a v1 h1:x\nb v1 h1:y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := mergeSums([]byte("a v1 h1:x"), []string{other, filepath.Join(dir, "missing.sum")})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a v1 h1:x\nb v1 h1:y\n"; string(got) != want {
		t.Errorf("merged = %q, want %q", got, want)
	}
}

// TestPrepareWorkspace prepares a module of a Go workspace whose other
// module is unpublished, and a fake agent in the workspace: the work
// go.mod must build the workspace's module from its directory with
// GOWORK=off, and the agent must still be the one Prepare writes.
func TestPrepareWorkspace(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lib/go.mod", "module example.com/lib\n\ngo 1.21\n")
	write("lib/lib.go", "package lib\n\nconst Name = \"workspace lib\"\n")
	write("fakeagent/go.mod", "module "+AgentModule+"\n\ngo 1.21\n")
	write("app/go.mod", "module example.com/app\n\ngo 1.21\n\nrequire (\n\texample.com/lib v0.1.0\n\t"+AgentModule+" v0.1.0\n)\n")
	write("app/main.go", "package main\n\nimport \"example.com/lib\"\n\nfunc main() { println(lib.Name) }\n")
	write("app/go.work", "go 1.21\n\nuse (\n\t.\n\t../lib\n\t../fakeagent\n)\n\nreplace (\n\texample.com/lib v0.1.0 => ../lib\n\t"+AgentModule+" v0.1.0 => ../fakeagent\n)\n")
	t.Setenv("GOWORK", "")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off") // nothing may be fetched: lib v0.1.0 exists nowhere
	w, err := Prepare(context.Background(), Target{Module: filepath.Join(root, "app"), WorkDir: filepath.Join(root, "work")})
	if err != nil {
		t.Fatal(err)
	}
	if w.Workspace != filepath.Join(root, "app", "go.work") {
		t.Errorf("Workspace = %q, want the app's go.work", w.Workspace)
	}
	data, err := os.ReadFile(w.ModFile)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, want := range []string{"example.com/lib => " + filepath.Join(root, "lib") + "\n", AgentModule + " => " + w.AgentDir + "\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("work go.mod lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "fakeagent") {
		t.Errorf("the workspace's agent reached the build:\n%s", got)
	}
	out, err := w.goCmd(context.Background(), append([]string{"list", "-f", "{{.Dir}}"}, append(w.GoFlags(), "example.com/lib")...)...)
	if err != nil {
		t.Fatal(err)
	}
	if dir := strings.TrimSpace(string(out)); dir != filepath.Join(root, "lib") {
		t.Errorf("the GOWORK=off build takes example.com/lib from %q, want the workspace's %s", dir, filepath.Join(root, "lib"))
	}
}
