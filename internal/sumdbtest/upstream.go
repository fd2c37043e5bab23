package sumdbtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb"
)

// SumGolangOrg is the verifier key of sum.golang.org, the one the go
// command has built in (cmd/go/internal/modfetch/key.go).
const SumGolangOrg = "sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8"

// Upstream looks modules up in a real checksum database and verifies
// every answer against the database's signed tree with its verifier key,
// as the go command does: the chain of trust of a module it answers for
// stays that database's. Its state (the latest signed tree, records and
// tiles) is cached in a directory, checked again when read.
type Upstream struct {
	client *sumdb.Client
	ops    *upstreamOps
}

// NewUpstream returns an Upstream for the database with verifier key vkey
// served at url (e.g. a module proxy's
// https://proxy.golang.org/sumdb/sum.golang.org), caching in dir.
func NewUpstream(url, vkey, dir string) *Upstream {
	ops := &upstreamOps{
		url: strings.TrimSuffix(url, "/"), vkey: vkey, dir: dir,
		http:     &http.Client{Timeout: time.Minute},
		notFound: map[string]bool{},
	}
	return &Upstream{client: sumdb.NewClient(ops), ops: ops}
}

// Lookup returns the go.sum lines of module path at version (the zip's and
// the go.mod's hash), verified. A module the database does not know is an
// error satisfying errors.Is(err, fs.ErrNotExist) (see NotFound).
func (u *Upstream) Lookup(path, version string) ([]byte, error) {
	var lines []string
	for _, v := range []string{version, version + "/go.mod"} {
		l, err := u.client.Lookup(path, v)
		if err != nil {
			m := module.Version{Path: path, Version: version}
			if u.ops.missing(m) {
				return nil, NotFound(m)
			}
			return nil, fmt.Errorf("verified lookup in %s: %w", u.ops.url, err)
		}
		lines = append(lines, l...)
	}
	if len(lines) == 0 {
		return nil, NotFound(module.Version{Path: path, Version: version})
	}
	return []byte(strings.Join(lines, "\n") + "\n"), nil
}

// upstreamOps are the sumdb.ClientOps of an Upstream: HTTP to the
// database, its configuration and cache as files under dir.
type upstreamOps struct {
	url, vkey, dir string
	http           *http.Client

	mu       sync.Mutex
	notFound map[string]bool // remote paths answered 404 or 410
}

// missing reports whether the database answered that it does not know m.
func (o *upstreamOps) missing(m module.Version) bool {
	path, err := module.EscapePath(m.Path)
	if err != nil {
		return false
	}
	v, err := module.EscapeVersion(m.Version)
	if err != nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.notFound["/lookup/"+path+"@"+v]
}

// ReadRemote implements sumdb.ClientOps.
func (o *upstreamOps) ReadRemote(path string) ([]byte, error) {
	resp, err := o.http.Get(o.url + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s%s: %w", o.url, path, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return data, nil
	case http.StatusNotFound, http.StatusGone:
		o.mu.Lock()
		o.notFound[path] = true
		o.mu.Unlock()
	}
	return nil, fmt.Errorf("%s%s: %s: %s", o.url, path, resp.Status, bytes.TrimSpace(data))
}

// file is the path under dir of a configuration or cache file, which the
// client names with slashes.
func (o *upstreamOps) file(kind, name string) (string, error) {
	rel := filepath.FromSlash(name)
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("checksum database file %q: not a local name", name)
	}
	return filepath.Join(o.dir, kind, rel), nil
}

// ReadConfig implements sumdb.ClientOps: the key, and the latest tree
// (empty at first).
func (o *upstreamOps) ReadConfig(name string) ([]byte, error) {
	if name == "key" {
		return []byte(o.vkey), nil
	}
	p, err := o.file("config", name)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// WriteConfig implements sumdb.ClientOps: it replaces the file's content
// old with new, or answers sumdb.ErrWriteConflict.
func (o *upstreamOps) WriteConfig(name string, old, new []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	cur, err := o.ReadConfig(name)
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, old) {
		return sumdb.ErrWriteConflict
	}
	p, err := o.file("config", name)
	if err != nil {
		return err
	}
	return writeAtomic(p, new)
}

// ReadCache implements sumdb.ClientOps.
func (o *upstreamOps) ReadCache(name string) ([]byte, error) {
	p, err := o.file("cache", name)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// WriteCache implements sumdb.ClientOps. A file that cannot be written is
// logged: the next lookup fetches it again.
func (o *upstreamOps) WriteCache(name string, data []byte) {
	p, err := o.file("cache", name)
	if err == nil {
		err = writeAtomic(p, data)
	}
	if err != nil {
		slog.Warn("checksum database cache", "file", name, "err", err)
	}
}

// Log implements sumdb.ClientOps.
func (o *upstreamOps) Log(msg string) { slog.Info("checksum database client", "msg", msg) }

// SecurityError implements sumdb.ClientOps: the client then answers
// sumdb.ErrSecurity for the lookup, which is refused.
func (o *upstreamOps) SecurityError(msg string) {
	slog.Error("checksum database misbehaves", "url", o.url, "msg", msg)
}

// writeAtomic writes data to p through a temporary file renamed over it.
func writeAtomic(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), p)
}
