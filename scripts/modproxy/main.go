// Command modproxy writes a file-based Go module proxy (GOPROXY=file://DIR)
// that serves gofault's modules from a git checkout at a test version, so
// that scripts/install-check.sh can check `go install ...@version` before
// a release is tagged. The root module is served at -version; the agent
// module at the version the root go.mod requires, as the release would
// publish it. The zips are made by golang.org/x/mod/zip from the files git
// tracks (as they are in the work tree), so they obey the module zip
// rules the go command checks (nested modules left out, size limits).
//
//	go run ./scripts/modproxy -dir /tmp/proxy -version v0.1.0-installcheck
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	dir := flag.String("dir", "", "proxy directory to write (required)")
	version := flag.String("version", "", "version to serve the root module at, e.g. v0.1.0-installcheck (required)")
	repo := flag.String("repo", ".", "the gofault checkout")
	flag.Parse()
	if *dir == "" || *version == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*dir, *repo, *version); err != nil {
		slog.Error("modproxy", "err", err)
		os.Exit(1)
	}
}

// run writes the root module at version and the agent at the version the
// root requires.
func run(dir, repo, version string) error {
	repo, err := filepath.Abs(repo)
	if err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		return fmt.Errorf("root go.mod: %w", err)
	}
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return fmt.Errorf("root go.mod: %w", err)
	}
	if len(f.Replace) > 0 {
		return errors.New("root go.mod has replace directives: go install ...@version refuses such a module")
	}
	agent := f.Module.Mod.Path + "/agent"
	agentVersion := ""
	for _, r := range f.Require {
		if r.Mod.Path == agent {
			agentVersion = r.Mod.Version
		}
	}
	if agentVersion == "" {
		return fmt.Errorf("root go.mod does not require %s", agent)
	}
	for _, m := range []struct {
		mod    module.Version
		subdir string
	}{
		{module.Version{Path: f.Module.Mod.Path, Version: version}, ""},
		{module.Version{Path: agent, Version: agentVersion}, "agent"},
	} {
		if err := write(dir, repo, m.subdir, m.mod); err != nil {
			return fmt.Errorf("%s@%s: %w", m.mod.Path, m.mod.Version, err)
		}
		slog.Info("served", "module", m.mod.Path, "version", m.mod.Version)
	}
	return nil
}

// write puts module m, whose source is the subdir of repo, into the proxy
// directory: its @v/list, .info, .mod and .zip.
func write(dir, repo, subdir string, m module.Version) error {
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	src := filepath.Join(repo, subdir)
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, m.Version+".mod"), gomod, 0o644); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, m.Version+".info"), info, 0o644); err != nil {
		return err
	}
	files, err := tracked(repo, subdir)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := zip.Create(&b, m, files); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, m.Version+".zip"), b.Bytes(), 0o644); err != nil {
		return err
	}
	list := filepath.Join(vdir, "list")
	old, err := os.ReadFile(list)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !strings.Contains("\n"+string(old), "\n"+m.Version+"\n") {
		old = append(old, m.Version+"\n"...)
	}
	return os.WriteFile(list, old, 0o644)
}

// tracked returns the files git tracks under subdir of repo that are
// present in the work tree, named relative to subdir.
func tracked(repo, subdir string) ([]zip.File, error) {
	args := []string{"-C", repo, "ls-files", "-z"}
	if subdir != "" {
		args = append(args, "--", subdir)
	}
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	var files []zip.File
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" {
			continue
		}
		full := filepath.Join(repo, filepath.FromSlash(name))
		fi, err := os.Lstat(full)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			return nil, err
		}
		rel := name
		if subdir != "" {
			rel = strings.TrimPrefix(name, path.Clean(subdir)+"/")
		}
		files = append(files, file{rel: rel, full: full, info: fi})
	}
	return files, nil
}

// file is a work-tree file for zip.Create.
type file struct {
	rel, full string
	info      fs.FileInfo
}

func (f file) Path() string                 { return f.rel }
func (f file) Lstat() (fs.FileInfo, error)  { return f.info, nil }
func (f file) Open() (io.ReadCloser, error) { return os.Open(f.full) }
