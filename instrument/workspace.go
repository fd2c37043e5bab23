package instrument

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// A target module may sit in a Go workspace (a go.work file found from its
// directory, or GOWORK): gofault's own targets and examples do, so that
// they build against the checkout rather than a published gofault. The
// instrumented build runs with GOWORK=off (-modfile does not work in
// workspace mode), so without more it would resolve the workspace's
// modules by the versions the go.mod files require: a different, or an
// unpublished, module. Prepare therefore writes the workspace into the
// work go.mod: every other module the go.work uses replaces its module
// path (all versions) with its directory, as workspace mode would, and the
// go.work's own replace directives are kept. The agent is the exception:
// the build always links the agent of the running gofault, written from
// agent.Source, whatever the workspace says.

// workspaceFile returns the go.work file that go commands run in dir with
// env would use, or "" when there is none (or GOWORK=off).
func workspaceFile(ctx context.Context, dir string, env []string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOWORK")
	cmd.Dir = dir
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env GOWORK in %s: %w\n%s", dir, err, strings.TrimSpace(stderr.String()))
	}
	f := strings.TrimSpace(string(out))
	if f == "off" {
		return "", nil
	}
	return f, nil
}

// workReplace is one replacement a workspace asks of the work go.mod.
type workReplace struct {
	Path, Version string // the replaced module, and version ("" for all)
	NewPath       string // a directory (absolute) or a module path
	NewVersion    string // "" for a directory
}

// workspaceReplacements returns the replacements that give a GOWORK=off
// build of the module in modDir what the workspace of the go.work file
// workFile (content data) gives it, and the go.sum files of the
// workspace (go.work.sum and the other modules' go.sum). modulePath reads
// the module path of a module directory. The main module and the agent
// are left out: the first is the build's own, the second always the
// running gofault's.
func workspaceReplacements(workFile string, data []byte, modDir string, modulePath func(dir string) (string, error)) ([]workReplace, []string, error) {
	wf, err := modfile.ParseWork(workFile, data, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("parse %s: %w", workFile, err)
	}
	base := filepath.Dir(workFile)
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(base, p)
	}
	var out []workReplace
	used := map[string]bool{}
	sums := []string{filepath.Join(base, "go.work.sum")}
	for _, u := range wf.Use {
		dir := abs(u.Path)
		if dir == filepath.Clean(modDir) {
			continue
		}
		path, err := modulePath(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: use %s: %w", workFile, u.Path, err)
		}
		sums = append(sums, filepath.Join(dir, "go.sum"))
		if path == AgentModule {
			continue
		}
		used[path] = true
		out = append(out, workReplace{Path: path, NewPath: dir})
	}
	for _, r := range wf.Replace {
		// In workspace mode a used module is the used directory at every
		// version; go.work must still replace it at the version a go.mod
		// requires (golang/go#54264), which says nothing more here.
		if used[r.Old.Path] || r.Old.Path == AgentModule {
			continue
		}
		nr := workReplace{Path: r.Old.Path, Version: r.Old.Version, NewPath: r.New.Path, NewVersion: r.New.Version}
		if r.New.Version == "" {
			nr.NewPath = abs(r.New.Path)
		}
		out = append(out, nr)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Version < out[j].Version
	})
	return out, sums, nil
}

// modulePathOf reads the module path of the go.mod in dir.
func modulePathOf(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	p := modfile.ModulePath(data)
	if p == "" {
		return "", fmt.Errorf("%s/go.mod names no module", dir)
	}
	return p, nil
}

// applyWorkspace rewrites the work go.mod data with the workspace's
// replacements: each replaces the module's earlier replacements (a go.work
// overrides a go.mod's replace directives).
func applyWorkspace(data []byte, name string, repl []workReplace) ([]byte, error) {
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, fmt.Errorf("parse work go.mod: %w", err)
	}
	for _, r := range repl {
		for _, old := range f.Replace {
			if old.Old.Path == r.Path && (r.Version == "" || old.Old.Version == r.Version) {
				if err := f.DropReplace(old.Old.Path, old.Old.Version); err != nil {
					return nil, fmt.Errorf("drop replace %s: %w", r.Path, err)
				}
			}
		}
	}
	for _, r := range repl {
		if err := f.AddReplace(r.Path, r.Version, r.NewPath, r.NewVersion); err != nil {
			return nil, fmt.Errorf("replace %s: %w", r.Path, err)
		}
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return nil, fmt.Errorf("format work go.mod: %w", err)
	}
	return out, nil
}

// mergeSums returns sum with the lines of the files of others that it
// lacks appended (missing files are skipped): a workspace build checks
// its modules against all of them.
func mergeSums(sum []byte, others []string) ([]byte, error) {
	have := map[string]bool{}
	for _, l := range strings.Split(string(sum), "\n") {
		have[l] = true
	}
	out := append([]byte(nil), sum...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	for _, f := range others {
		data, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("workspace go.sum: %w", err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if l == "" || have[l] {
				continue
			}
			have[l] = true
			out = append(out, l...)
			out = append(out, '\n')
		}
	}
	return out, nil
}
