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
//
// With -sumdb it then serves a checksum database on that address until it
// is stopped (SIGTERM, SIGINT), so that the go command checks the test
// version too rather than exempting it: the served modules' go.sum lines
// come from the zips it wrote, every other module's from a verified lookup
// in sum.golang.org (through the first module proxy of -goproxy, with the
// verifier key the go command has built in; the client's state cached in
// -sumdb-cache), and an unknown module is refused. Once it listens it
// writes the value for GOSUMDB ("<verifier key> <URL>") to -sumdb-file.
//
//	modproxy -dir /tmp/proxy -version v0.1.0-installcheck \
//		-sumdb 127.0.0.1:0 -sumdb-file /tmp/gosumdb -sumdb-cache /tmp/sumdb-cache
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gofault/gofault/internal/sumdbtest"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	dir := flag.String("dir", "", "proxy directory to write (required)")
	version := flag.String("version", "", "version to serve the root module at, e.g. v0.1.0-installcheck (required)")
	repo := flag.String("repo", ".", "the gofault checkout")
	sumdbAddr := flag.String("sumdb", "", "serve a checksum database on this address (e.g. 127.0.0.1:0) until stopped")
	sumdbFile := flag.String("sumdb-file", "", "with -sumdb: file to write the GOSUMDB value to once serving (required)")
	sumdbCache := flag.String("sumdb-cache", "", "with -sumdb: directory for the sum.golang.org client's state (required)")
	goproxy := flag.String("goproxy", os.Getenv("GOPROXY"), "with -sumdb: the GOPROXY list whose first proxy reaches sum.golang.org")
	flag.Parse()
	if *dir == "" || *version == "" || *sumdbAddr != "" && (*sumdbFile == "" || *sumdbCache == "") {
		flag.Usage()
		os.Exit(2)
	}
	served, err := run(*dir, *repo, *version)
	if err == nil && *sumdbAddr != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err = serveSumDB(ctx, *sumdbAddr, *sumdbFile, sumdbtest.NewUpstream(upstreamURL(*goproxy), sumdbtest.SumGolangOrg, *sumdbCache), served)
	}
	if err != nil {
		slog.Error("modproxy", "err", err)
		os.Exit(1)
	}
}

// served is a module version the proxy serves: the files the checksum
// database hashes.
type served struct {
	mod   module.Version
	zip   string // path of the .zip
	gomod []byte
}

// run writes the root module at version and the agent at the version the
// root requires, and returns them.
func run(dir, repo, version string) ([]served, error) {
	repo, err := filepath.Abs(repo)
	if err != nil {
		return nil, err
	}
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("root go.mod: %w", err)
	}
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return nil, fmt.Errorf("root go.mod: %w", err)
	}
	if len(f.Replace) > 0 {
		return nil, errors.New("root go.mod has replace directives: go install ...@version refuses such a module")
	}
	agent := f.Module.Mod.Path + "/agent"
	agentVersion := ""
	for _, r := range f.Require {
		if r.Mod.Path == agent {
			agentVersion = r.Mod.Version
		}
	}
	if agentVersion == "" {
		return nil, fmt.Errorf("root go.mod does not require %s", agent)
	}
	var out []served
	for _, m := range []struct {
		mod    module.Version
		subdir string
	}{
		{module.Version{Path: f.Module.Mod.Path, Version: version}, ""},
		{module.Version{Path: agent, Version: agentVersion}, "agent"},
	} {
		s, err := write(dir, repo, m.subdir, m.mod)
		if err != nil {
			return nil, fmt.Errorf("%s@%s: %w", m.mod.Path, m.mod.Version, err)
		}
		out = append(out, s)
		slog.Info("served", "module", m.mod.Path, "version", m.mod.Version)
	}
	return out, nil
}

// write puts module m, whose source is the subdir of repo, into the proxy
// directory: its @v/list, .info, .mod and .zip.
func write(dir, repo, subdir string, m module.Version) (served, error) {
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return served{}, err
	}
	vdir := filepath.Join(dir, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return served{}, err
	}
	src := filepath.Join(repo, subdir)
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return served{}, err
	}
	if err := os.WriteFile(filepath.Join(vdir, m.Version+".mod"), gomod, 0o644); err != nil {
		return served{}, err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return served{}, err
	}
	if err := os.WriteFile(filepath.Join(vdir, m.Version+".info"), info, 0o644); err != nil {
		return served{}, err
	}
	files, err := tracked(repo, subdir)
	if err != nil {
		return served{}, err
	}
	var b bytes.Buffer
	if err := zip.Create(&b, m, files); err != nil {
		return served{}, err
	}
	zipFile := filepath.Join(vdir, m.Version+".zip")
	if err := os.WriteFile(zipFile, b.Bytes(), 0o644); err != nil {
		return served{}, err
	}
	list := filepath.Join(vdir, "list")
	old, err := os.ReadFile(list)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return served{}, err
	}
	if !strings.Contains("\n"+string(old), "\n"+m.Version+"\n") {
		old = append(old, m.Version+"\n"...)
	}
	if err := os.WriteFile(list, old, 0o644); err != nil {
		return served{}, err
	}
	return served{mod: m, zip: zipFile, gomod: gomod}, nil
}

// serveSumDB serves, on addr until ctx is done, a checksum database that
// answers the served modules from their files and every other module
// through upstream, and writes the GOSUMDB value for it to file once it
// listens.
func serveSumDB(ctx context.Context, addr, file string, upstream *sumdbtest.Upstream, mods []served) error {
	db, err := sumdbtest.New(sumdbName, upstream.Lookup)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if err := db.Add(m.mod, m.zip, m.gomod); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("checksum database: %w", err)
	}
	url := "http://" + ln.Addr().String()
	srv := &http.Server{Handler: logLookups(db.Handler()), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	// Written whole (renamed into place): the script waits for the file.
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(db.GOSUMDB(url)+"\n"), 0o644); err != nil {
		srv.Close()
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		srv.Close()
		return err
	}
	slog.Info("checksum database serving", "url", url, "name", sumdbName)
	select {
	case err := <-done:
		return fmt.Errorf("checksum database: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shut)
}

// sumdbName is the name of the checksum database (the go command keeps its
// state under GOPATH/pkg/sumdb/<name>).
const sumdbName = "gofault-installcheck.test"

// logLookups logs each lookup and its outcome: what the go command had
// checked, and why it was refused.
func logLookups(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/lookup/") {
			h.ServeHTTP(w, r)
			return
		}
		rec := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		slog.Info("checksum database lookup", "module", strings.TrimPrefix(r.URL.Path, "/lookup/"), "status", rec.code)
	})
}

// statusWriter records the status code written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// upstreamURL returns where sum.golang.org is reached from a GOPROXY list:
// through its first proxy (<proxy>/sumdb/sum.golang.org, the checksum
// database proxy protocol), or directly where the list has none before
// "direct" or "off".
func upstreamURL(goproxy string) string {
	for _, p := range strings.FieldsFunc(goproxy, func(r rune) bool { return r == ',' || r == '|' }) {
		p = strings.TrimSpace(p)
		switch {
		case p == "direct" || p == "off":
			return "https://sum.golang.org"
		case strings.HasPrefix(p, "https://") || strings.HasPrefix(p, "http://"):
			return strings.TrimSuffix(p, "/") + "/sumdb/sum.golang.org"
		}
	}
	return "https://sum.golang.org"
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
