// Package sumdbtest serves a Go checksum database of its own, signed with a
// key it makes, for modules that exist only in a test's module proxy (a
// fake module graph, gofault at a version not yet published). With
// GOSUMDB set to DB.GOSUMDB the go command checks every module against it
// as it checks real ones against sum.golang.org: nothing is exempted from
// the checksum check. A module the database was not given is looked up
// through the DB's Other function, or refused.
package sumdbtest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"sync"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/sumdb/note"
)

// DB is a checksum database: the go.sum lines of the modules added to it,
// and of the others as Other answers them, in a signed tree.
type DB struct {
	vkey string
	srv  *sumdb.TestServer

	mu     sync.Mutex
	local  map[module.Version][]byte
	other  func(path, version string) ([]byte, error)
	looked []module.Version
}

// New returns an empty database named name (a host name, as the go
// command requires of a checksum database's name) with a new signing key.
// other answers the modules not added (their go.sum lines, or an error
// satisfying errors.Is(err, fs.ErrNotExist) for an unknown one); nil
// refuses them all.
func New(name string, other func(path, version string) ([]byte, error)) (*DB, error) {
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		return nil, fmt.Errorf("checksum database key: %w", err)
	}
	db := &DB{vkey: vkey, local: map[module.Version][]byte{}, other: other}
	db.srv = sumdb.NewTestServer(skey, db.gosum)
	return db, nil
}

// Add puts the go.sum lines of module m — the h1: hashes of its zip file
// (as a module proxy serves it) and of its go.mod — into the database.
func (db *DB) Add(m module.Version, zipFile string, gomod []byte) error {
	lines, err := Lines(m, zipFile, gomod)
	if err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.local[m] = lines
	return nil
}

// Lines returns the two go.sum lines of module m: the hash of its zip
// file and that of its go.mod, as the go command computes them.
func Lines(m module.Version, zipFile string, gomod []byte) ([]byte, error) {
	zh, err := dirhash.HashZip(zipFile, dirhash.Hash1)
	if err != nil {
		return nil, fmt.Errorf("hash of %s@%s: %w", m.Path, m.Version, err)
	}
	mh, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gomod)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("hash of %s@%s/go.mod: %w", m.Path, m.Version, err)
	}
	return fmt.Appendf(nil, "%s %s %s\n%s %s/go.mod %s\n", m.Path, m.Version, zh, m.Path, m.Version, mh), nil
}

// gosum answers the test server's lookup of a module it has no record of
// yet.
func (db *DB) gosum(path, version string) ([]byte, error) {
	m := module.Version{Path: path, Version: version}
	db.mu.Lock()
	db.looked = append(db.looked, m)
	lines, ok := db.local[m]
	other := db.other
	db.mu.Unlock()
	if ok {
		return lines, nil
	}
	if other == nil {
		return nil, NotFound(m)
	}
	return other(path, version)
}

// NotFound is the error for a module the database does not know: its
// server answers 404, and the go command refuses the module.
func NotFound(m module.Version) error {
	// os.IsNotExist, which the server's reportError asks, unwraps a
	// *fs.PathError only.
	return &fs.PathError{Op: "checksum database lookup", Path: m.String(), Err: fs.ErrNotExist}
}

// Handler serves the checksum database protocol (lookup, latest, tile)
// at the root of its URL.
func (db *DB) Handler() http.Handler {
	srv := sumdb.NewServer(db.srv)
	mux := http.NewServeMux()
	for _, p := range sumdb.ServerPaths {
		mux.Handle(p, srv)
	}
	return mux
}

// Key returns the database's verifier key (its name, key hash and public
// key), which the go command and sumdb.Client check its tree against.
func (db *DB) Key() string { return db.vkey }

// GOSUMDB returns the value of GOSUMDB that makes the go command check
// every module against the database served (Handler) at url: its
// verifier key and url.
func (db *DB) GOSUMDB(url string) string { return db.vkey + " " + url }

// Looked returns, in order, every lookup of a module version that the
// tree did not hold yet (a refused one again each time it is asked): the
// go command asks for each module version once per module cache.
func (db *DB) Looked() []module.Version {
	db.mu.Lock()
	defer db.mu.Unlock()
	return append([]module.Version(nil), db.looked...)
}
