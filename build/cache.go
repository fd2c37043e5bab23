package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofault/gofault/analysis"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/instrument"
	"github.com/gofault/gofault/procgroup"
)

// A build is reused while its inputs are unchanged. The inputs are hashed
// into a key that is recorded next to the binary (KeyFile) once the build
// succeeds:
//
//   - gofault itself: a hash of the running executable, which also embeds
//     the agent module's source;
//   - the Go toolchain: go env GOVERSION, GOOS, GOARCH, GOFLAGS, ...;
//   - the target (module, main, packages, build flags, version,
//     versioned), the kind of build (node, plain, given catalog) and
//     whether it is stripped;
//   - the work go.mod and go.sum (the module versions);
//   - the content of every source file of the built and analysed
//     packages and their dependencies outside the module cache (whose
//     content go.sum pins): the user's files and the work dir's module
//     copies.

// keyRecord is the content of a key file: the key and what a reused build
// returns.
type keyRecord struct {
	Key string `json:"key"`
	// Size and ModTime are the binary's when it was recorded.
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
	// CatalogFile and CatalogHash name the catalog built with it.
	CatalogFile string               `json:"catalog_file,omitempty"`
	CatalogHash string               `json:"catalog_hash,omitempty"`
	Stats       instrument.Stats     `json:"stats"`
	Dropped     []instrument.Dropped `json:"dropped,omitempty"`
}

// KeyFile is where the key of the build of binary is recorded.
func KeyFile(binary string) string { return binary + ".key" }

// readKey reads the key file of the build of binary (KeyFile).
func readKey(binary string) (keyRecord, error) {
	var rec keyRecord
	data, err := os.ReadFile(KeyFile(binary))
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("%s: %w", KeyFile(binary), err)
	}
	return rec, nil
}

// reuse returns the recorded result of the build into out when its key is
// key and the binary and its catalog are still the ones built.
func reuse(out, key string) (*instrument.Result, bool) {
	rec, err := readKey(out)
	if err != nil || rec.Key != key {
		return nil, false
	}
	bin, err := filepath.Abs(out)
	if err != nil {
		return nil, false
	}
	fi, err := os.Stat(bin)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != rec.Size || !fi.ModTime().Equal(rec.ModTime) {
		return nil, false
	}
	res := &instrument.Result{Binary: bin, Stats: rec.Stats, Dropped: rec.Dropped}
	if rec.CatalogFile != "" {
		cat, err := catalog.Load(rec.CatalogFile)
		if err != nil || cat.Hash != rec.CatalogHash {
			return nil, false
		}
		res.CatalogFile, res.Catalog = rec.CatalogFile, cat
		res.Skipped = map[string]string{}
		for _, d := range rec.Dropped {
			if d.What != instrument.WhatDisk { // kept, without its disk faults
				res.Skipped[d.ID] = d.Reason
			}
		}
	}
	return res, true
}

// forget removes out's key file, so that a build that fails half way is
// never taken for the recorded one.
func forget(out string) error {
	if err := os.Remove(KeyFile(out)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("build key: %w", err)
	}
	return nil
}

// record writes the key file of the finished build res.
func record(res *instrument.Result, key string) error {
	fi, err := os.Stat(res.Binary)
	if err != nil {
		return fmt.Errorf("build key: %w", err)
	}
	rec := keyRecord{Key: key, Size: fi.Size(), ModTime: fi.ModTime(), CatalogFile: res.CatalogFile,
		Stats: res.Stats, Dropped: res.Dropped}
	if res.Catalog != nil {
		rec.CatalogHash = res.Catalog.Hash
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("build key: %w", err)
	}
	if err := os.WriteFile(KeyFile(res.Binary), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("build key: %w", err)
	}
	return nil
}

// nodeKey hashes the inputs of a build of kind ("node", "plain", ...) of
// t in the prepared work dir w.
func nodeKey(ctx context.Context, w *instrument.Work, t instrument.Target, kind string, strip bool) (string, error) {
	in, err := inputsKey(ctx, w, t)
	if err != nil {
		return "", err
	}
	return kindKey(in, kind, strip), nil
}

// kindKey is the key of a build of kind (or of the analysis, kind
// "analysis") from the hash of its inputs (inputsKey).
func kindKey(inputs, kind string, strip bool) string {
	h := sha256.New()
	fmt.Fprintf(h, "inputs %s\nkind %s\nstrip %v\n", inputs, kind, strip)
	return hex.EncodeToString(h.Sum(nil))
}

// inputsKey hashes what a build or an analysis of t in the prepared work
// dir w reads: gofault itself, the target, the Go toolchain, the module
// versions and the sources.
func inputsKey(ctx context.Context, w *instrument.Work, t instrument.Target) (string, error) {
	self, err := selfHash()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "gofault %s\n", self)
	target, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("build key: %w", err)
	}
	fmt.Fprintf(h, "target %s\n", target)
	env, err := goEnv(ctx, w.ModuleDir, w.Env)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "go %s\n", env.text)
	sum := strings.TrimSuffix(w.ModFile, ".mod") + ".sum"
	if err := hashFiles(h, w.ModFile, sum); err != nil {
		return "", err
	}
	patterns := append([]string{w.Main}, w.Patterns...)
	flags := w.AllBuildFlags()
	if w.Test {
		// A test binary is built from the packages' _test.go files too.
		flags = append(flags, "-test")
	}
	if err := hashSources(ctx, h, w.ModuleDir, w.Env, flags, patterns, env.modCache); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// workloadKey hashes the inputs of the build of the workload package pkg
// of the module in dir.
func workloadKey(ctx context.Context, dir, pkg string, strip bool) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "workload %s\nstrip %v\n", pkg, strip)
	environ := os.Environ()
	env, err := goEnv(ctx, dir, environ)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "go %s\n", env.text)
	if env.goMod == "" || env.goMod == os.DevNull {
		return "", fmt.Errorf("build key: %s is not in a module", dir)
	}
	if err := hashFiles(h, env.goMod, strings.TrimSuffix(env.goMod, ".mod")+".sum"); err != nil {
		return "", err
	}
	if err := hashSources(ctx, h, dir, environ, nil, []string{pkg}, env.modCache); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// selfHash hashes the running gofault executable, once per process.
var selfHash = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("build key: gofault executable: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("build key: gofault executable: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("build key: gofault executable: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
})

// toolchain is what go env says about the toolchain of a build.
type toolchain struct {
	text         string // the settings that go into the key
	modCache     string
	goMod        string
	goos, goarch string
}

// goEnv asks the go command in dir about the settings that change what it
// builds.
func goEnv(ctx context.Context, dir string, env []string) (toolchain, error) {
	vars := []string{"GOVERSION", "GOOS", "GOARCH", "GOFLAGS", "CGO_ENABLED", "GOEXPERIMENT", "GOAMD64", "GOARM64", "GOMODCACHE", "GOMOD"}
	cmd := procgroup.Command(ctx, "go", append([]string{"env", "-json"}, vars...)...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := procgroup.Run(cmd); err != nil {
		return toolchain{}, fmt.Errorf("build key: go env: %w", err)
	}
	var m map[string]string
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		return toolchain{}, fmt.Errorf("build key: go env: %w", err)
	}
	tc := toolchain{modCache: m["GOMODCACHE"], goMod: m["GOMOD"], goos: m["GOOS"], goarch: m["GOARCH"]}
	delete(m, "GOMOD")
	text, err := json.Marshal(m) // sorted keys
	if err != nil {
		return toolchain{}, fmt.Errorf("build key: go env: %w", err)
	}
	tc.text = string(text)
	return tc, nil
}

// hashFiles writes the names and contents of files to h; a missing file
// counts as empty.
func hashFiles(h hash.Hash, files ...string) error {
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("build key: %w", err)
		}
		fmt.Fprintf(h, "file %s %d\n", f, len(data))
		h.Write(data)
	}
	return nil
}

// listedPackage is the part of go list -json output hashSources needs.
type listedPackage struct {
	ImportPath                                                                 string
	Dir                                                                        string
	Standard                                                                   bool
	GoFiles, CgoFiles, CFiles, CXXFiles, HFiles, SFiles, SysoFiles, EmbedFiles []string
}

// listFields are the fields of listedPackage, for go list -json=.
const listFields = "ImportPath,Dir,Standard,GoFiles,CgoFiles,CFiles,CXXFiles,HFiles,SFiles,SysoFiles,EmbedFiles"

// hashSources writes to h the source files of patterns and all their
// dependencies that are neither in the standard library (the Go version
// names it) nor in the module cache modCache (go.sum pins it), by content:
// for etcd that is 258 files, 1.9 MB, hashed in milliseconds.
func hashSources(ctx context.Context, h hash.Hash, dir string, env, flags, patterns []string, modCache string) error {
	args := append([]string{"list", "-deps", "-json=" + listFields}, flags...)
	cmd := procgroup.Command(ctx, "go", append(args, patterns...)...)
	cmd.Dir, cmd.Env = dir, env
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := procgroup.Run(cmd); err != nil {
		return fmt.Errorf("build key: go list: %w\n%s", err, strings.TrimSpace(stderr.String()))
	}
	dec := json.NewDecoder(&out)
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("build key: go list: %w", err)
		}
		if p.Standard || (modCache != "" && strings.HasPrefix(p.Dir, modCache+string(filepath.Separator))) {
			continue
		}
		if strings.HasSuffix(p.ImportPath, ".test") {
			// A test binary's generated main (go list -test), made from
			// the test files hashed with their package.
			continue
		}
		for _, files := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.HFiles, p.SFiles, p.SysoFiles, p.EmbedFiles} {
			for _, f := range files {
				path := filepath.Join(p.Dir, f)
				if err := hashFiles(h, path); err != nil {
					return err
				}
			}
		}
	}
}

// analysisFile is where the last analysis of a work dir is kept, with the
// key of its inputs, so that a build right after `gofault analyze` of the
// same inputs analyses once.
func analysisFile(w *instrument.Work) string { return filepath.Join(w.Dir, "analysis.json") }

// analysisRecord is the content of analysisFile.
type analysisRecord struct {
	Key    string           `json:"key"`
	Time   time.Time        `json:"time"`
	Result *analysis.Result `json:"result"`
}

// analyzeCached returns the analysis of w's inputs (key: kindKey of
// inputsKey, "analysis"; "" when the inputs could not be hashed): the one
// kept in the work dir when its key is key, else a fresh one, kept.
// reused says which.
func analyzeCached(ctx context.Context, w *instrument.Work, key string) (res *analysis.Result, reused bool, err error) {
	if key != "" {
		if data, err := os.ReadFile(analysisFile(w)); err == nil {
			var rec analysisRecord
			if json.Unmarshal(data, &rec) == nil && rec.Key == key && rec.Result != nil && rec.Result.Catalog != nil && rec.Result.Catalog.Check() == nil {
				slog.Info("reusing the analysis of the same inputs", "analysed", rec.Time.Format(time.RFC3339), "sites", len(rec.Result.Catalog.Sites))
				return rec.Result, true, nil
			}
		}
	}
	if err := os.Remove(analysisFile(w)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("analysis record: %w", err)
	}
	t0 := time.Now()
	slog.Info("analysing the target packages (the longest step on a large module)", "patterns", w.Patterns)
	res, err = Analyze(ctx, w)
	if err != nil || key == "" {
		return res, false, err
	}
	slog.Info("analysed", "sites", len(res.Catalog.Sites), "seconds", time.Since(t0).Round(100*time.Millisecond).Seconds())
	data, err := json.Marshal(analysisRecord{Key: key, Time: time.Now(), Result: res})
	if err != nil {
		return nil, false, fmt.Errorf("analysis record: %w", err)
	}
	tmp := analysisFile(w) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return nil, false, fmt.Errorf("analysis record: %w", err)
	}
	if err := os.Rename(tmp, analysisFile(w)); err != nil {
		return nil, false, fmt.Errorf("analysis record: %w", err)
	}
	return res, false, nil
}
