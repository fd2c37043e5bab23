package gotest

// A test campaign's bundle: what a worker (gofault worker) needs to run
// the campaign's fault trials with no Go toolchain and no checkout.

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/catalog"
)

// Names of a test bundle's files, beside build.BundleManifest and
// build.BundleCatalog.
const (
	// BundleBinary is the instrumented test binary.
	BundleBinary = "pkg.test"
	// BundleOptions holds the campaign's Options (JSON), its directories
	// left out: they are the coordinator's.
	BundleOptions = "options.json"
	// BundlePackage is the copy of the package directory the tests run
	// in (PackageFiles).
	BundlePackage = "pkg"
)

// MaxPackageBytes bounds the package directory's files a bundle copies:
// its files and its testdata tree, read by tests through relative paths.
const MaxPackageBytes = 64 << 20

// Bundle is an opened test bundle.
type Bundle struct {
	Dir      string
	Manifest build.Manifest
	// Binary is the test binary's path, PkgDir the directory it runs in.
	Binary, PkgDir string
	Catalog        *catalog.Catalog
	// Options are the campaign's options (no directories).
	Options Options
}

// writeBundle writes the bundle of c's campaign into dir: the test
// binary, its catalog, the package directory's files (PackageFiles) and
// the options, then the manifest (written last: a bundle without one is
// unfinished). It returns the bytes written.
func (c *campaignRun) writeBundle(dir string) (int64, error) {
	// An earlier bundle's manifest goes first (a bundle without one is
	// unfinished), and its package files (the package may have lost
	// some); nothing else of dir is removed.
	for _, old := range []string{build.BundleManifest, BundlePackage} {
		if err := os.RemoveAll(filepath.Join(dir, old)); err != nil {
			return 0, fmt.Errorf("test bundle: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("test bundle: %w", err)
	}
	version, err := build.Version()
	if err != nil {
		return 0, err
	}
	var total int64
	n, err := copyFile(c.bin, filepath.Join(dir, BundleBinary), 0o755)
	if err != nil {
		return 0, fmt.Errorf("test bundle: %w", err)
	}
	total += n
	if err := c.cat.Save(filepath.Join(dir, build.BundleCatalog)); err != nil {
		return 0, fmt.Errorf("test bundle: %w", err)
	}
	files, err := PackageFiles(c.pkgDir, MaxPackageBytes)
	if err != nil {
		return 0, err
	}
	for _, rel := range files {
		n, err := copyFile(filepath.Join(c.pkgDir, rel), filepath.Join(dir, BundlePackage, rel), 0)
		if err != nil {
			return 0, fmt.Errorf("test bundle: %w", err)
		}
		total += n
	}
	if err := os.MkdirAll(filepath.Join(dir, BundlePackage), 0o755); err != nil {
		return 0, fmt.Errorf("test bundle: %w", err)
	}
	o := c.o
	o.Module, o.WorkDir, o.DB, o.Config = "", "", "", ""
	o.Trials = 0 // the coordinator's: a resume to more trials is the same bundle
	if err := build.WriteJSONFile(filepath.Join(dir, BundleOptions), o); err != nil {
		return 0, err
	}
	// Built is the test binary's build time, not the bundle's: a bundle
	// written again from the same binary (a resumed campaign) is the same
	// bundle, with the same digest on the queue.
	built := time.Now()
	if info, err := os.Stat(c.bin); err == nil {
		built = info.ModTime()
	}
	m := build.Manifest{Gofault: version, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Target: "test " + c.o.Package,
		CatalogHash: c.cat.Hash, Node: BundleBinary, Built: built.UTC(), Kind: build.KindTest}
	if err := build.WriteJSONFile(filepath.Join(dir, build.BundleManifest), m); err != nil {
		return 0, err
	}
	return total, nil
}

// PackageFiles lists, relative to pkgDir, the files a test may read
// through a relative path: the directory's own regular files and every
// regular file under its testdata directory. Other subdirectories (other
// packages) are left out. More than limit bytes in all is an error that
// says so: a bundle is published whole.
func PackageFiles(pkgDir string, limit int64) ([]string, error) {
	var out []string
	var size int64
	add := func(rel string, fi fs.FileInfo) error {
		if !fi.Mode().IsRegular() {
			return nil
		}
		size += fi.Size()
		if size > limit {
			return fmt.Errorf("test bundle: the package directory %s holds more than %d MiB (its files and testdata), too much to publish with every bundle", pkgDir, limit>>20)
		}
		out = append(out, rel)
		return nil
	}
	ents, err := os.ReadDir(pkgDir)
	if err != nil {
		return nil, fmt.Errorf("test bundle: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("test bundle: %w", err)
		}
		if err := add(e.Name(), fi); err != nil {
			return nil, err
		}
	}
	td := filepath.Join(pkgDir, "testdata")
	if _, err := os.Stat(td); err != nil {
		return out, nil
	}
	err = filepath.WalkDir(td, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(pkgDir, path)
		if err != nil {
			return err
		}
		return add(rel, fi)
	})
	if err != nil {
		return nil, fmt.Errorf("test bundle: %w", err)
	}
	return out, nil
}

// OpenBundle opens the test bundle in dir: one this gofault wrote for
// this platform (build.ReadManifest), of a test campaign, whose catalog
// is the one its test binary was built with.
func OpenBundle(dir string) (*Bundle, error) {
	dir, m, err := build.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if m.Kind != build.KindTest {
		return nil, fmt.Errorf("bundle %s is not a test campaign's (gofault test --bundle)", dir)
	}
	b := &Bundle{Dir: dir, Manifest: m, Binary: filepath.Join(dir, m.Node), PkgDir: filepath.Join(dir, BundlePackage)}
	for _, f := range []string{b.Binary, b.PkgDir} {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("bundle %s: %w", dir, err)
		}
	}
	if b.Catalog, err = catalog.Load(filepath.Join(dir, build.BundleCatalog)); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	if b.Catalog.Hash != m.CatalogHash {
		return nil, fmt.Errorf("bundle %s: catalog.json has hash %s, the test binary was built with %s", dir, b.Catalog.Hash, m.CatalogHash)
	}
	data, err := os.ReadFile(filepath.Join(dir, BundleOptions))
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	if err := json.Unmarshal(data, &b.Options); err != nil {
		return nil, fmt.Errorf("bundle %s: options: %w", dir, err)
	}
	return b, nil
}

// copyFile copies src to dst (its directory made) with mode perm (0:
// src's) and returns the bytes copied.
func copyFile(src, dst string, perm os.FileMode) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	if perm == 0 {
		fi, err := in.Stat()
		if err != nil {
			return 0, err
		}
		perm = fi.Mode().Perm()
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}
