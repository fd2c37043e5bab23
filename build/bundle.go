package build

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/instrument"
)

// A bundle is a directory that runs campaigns with no Go toolchain and no
// target source: the stripped instrumented node binary, its catalog.json,
// the stripped workload binary, the resolved config (gofault.yaml) and a
// manifest.

// Names of the files of a bundle.
const (
	BundleManifest = "manifest.json"
	BundleConfig   = "gofault.yaml"
	BundleCatalog  = "catalog.json"
	BundleDropped  = "dropped.json"
)

// Manifest describes a bundle; a bundle runs only under the gofault
// version and platform it names.
type Manifest struct {
	// Gofault is the version of the gofault that built it (Version).
	Gofault string `json:"gofault"`
	GOOS    string `json:"goos"`
	GOARCH  string `json:"goarch"`
	// Target is the config's name, TargetVersion its target.version.
	Target        string `json:"target"`
	TargetVersion string `json:"target_version,omitempty"`
	CatalogHash   string `json:"catalog_hash"`
	// Node and Workload are the binaries' file names in the bundle;
	// Workload is empty when the config runs workload.command.
	Node     string    `json:"node"`
	Workload string    `json:"workload,omitempty"`
	Built    time.Time `json:"built"`
	// Kind is what the bundle runs: "" a cluster campaign (gofault build
	// --bundle), KindTest a test campaign (gofault test --bundle, whose
	// Node is the test binary).
	Kind string `json:"kind,omitempty"`
}

// KindTest is the Manifest.Kind of a test campaign's bundle.
const KindTest = "test"

// Bundle is an opened bundle.
type Bundle struct {
	Dir      string
	Manifest Manifest
	// Node and Workload are absolute paths of the binaries (Workload ""
	// when the config runs workload.command); Config the bundled config.
	Node, Workload, Config string
	Catalog                *catalog.Catalog
}

// Version names the running gofault: its module version, or for a
// development build "devel+" and a hash of its executable, so that a bundle
// never runs under a gofault built from other source.
func Version() (string, error) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" && !strings.Contains(v, "dirty") {
			return v, nil
		}
	}
	h, err := selfHash()
	if err != nil {
		return "", err
	}
	return "devel+" + h[:16], nil
}

// BundleResult describes a written bundle.
type BundleResult struct {
	Manifest Manifest
	// Node is the node build (Reused when its inputs were unchanged);
	// WorkloadReused says the same of the workload.
	Node           *Result
	WorkloadReused bool
	// Bytes is the size of the bundle's files.
	Bytes int64
}

// WriteBundle builds cfg's node binary and workload stripped into dir and
// writes the catalog, the resolved config raw (cfg as loaded with its
// overrides, before defaults; its work dir is left to the machine that
// runs it) and the manifest beside them. Builds whose inputs are unchanged
// are reused unless opts.Rebuild.
func WriteBundle(ctx context.Context, cfg, raw *config.Config, dir string, opts Options) (*BundleResult, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	version, err := Version()
	if err != nil {
		return nil, err
	}
	t := Target(cfg)
	opts.Strip = true
	res, err := Node(ctx, t, filepath.Join(dir, cfg.Name), nil, opts)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	br := &BundleResult{Node: res}
	m := Manifest{Gofault: version, Target: cfg.Name, TargetVersion: cfg.Target.Version,
		CatalogHash: res.Catalog.Hash, Node: cfg.Name, Built: time.Now().UTC()}
	tc, err := goEnv(ctx, t.Module, res.Work.Env)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	m.GOOS, m.GOARCH = tc.goos, tc.goarch
	if cfg.Workload.Package != "" {
		m.Workload = cfg.Name + "-workload"
		if br.WorkloadReused, err = Workload(ctx, t.Module, cfg.Workload.Package, filepath.Join(dir, m.Workload), opts); err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
	}
	if err := WriteJSONFile(filepath.Join(dir, BundleDropped), nonNil(res.Dropped)); err != nil {
		return nil, err
	}
	conf := *raw
	conf.WorkDir = ""
	data, err := yaml.Marshal(&conf)
	if err != nil {
		return nil, fmt.Errorf("bundle: config: %w", err)
	}
	head := fmt.Sprintf("# %s, resolved for a bundle by gofault %s; the target section is kept for reference:\n"+
		"# the bundle's binaries are run, nothing is built.\n", cfg.Name, version)
	if err := os.WriteFile(filepath.Join(dir, BundleConfig), append([]byte(head), data...), 0o644); err != nil {
		return nil, fmt.Errorf("bundle: config: %w", err)
	}
	if err := WriteJSONFile(filepath.Join(dir, BundleManifest), m); err != nil {
		return nil, err
	}
	br.Manifest = m
	for _, f := range []string{m.Node, m.Workload, BundleCatalog, BundleConfig, BundleManifest, BundleDropped} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil && f != "" {
			br.Bytes += fi.Size()
		}
	}
	return br, nil
}

// ErrBundleMismatch is returned by OpenBundle for a bundle built by another
// gofault version or for another platform.
var ErrBundleMismatch = errors.New("bundle does not match this gofault")

// ReadManifest reads the manifest of the bundle in dir, absolute, and
// checks that the running gofault can run it: the same gofault version,
// GOOS and GOARCH. It returns dir made absolute.
func ReadManifest(dir string) (string, Manifest, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", Manifest{}, fmt.Errorf("bundle: %w", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, BundleManifest))
	if err != nil {
		return "", Manifest{}, fmt.Errorf("bundle %s: %w (write one with gofault build --bundle or gofault test --bundle)", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return "", Manifest{}, fmt.Errorf("bundle %s: manifest: %w", dir, err)
	}
	version, err := Version()
	if err != nil {
		return "", Manifest{}, err
	}
	if m.Gofault != version {
		return "", Manifest{}, fmt.Errorf("%w: bundle %s was built by gofault %s, this is gofault %s; rebuild it with this gofault",
			ErrBundleMismatch, dir, m.Gofault, version)
	}
	if m.GOOS != runtime.GOOS || m.GOARCH != runtime.GOARCH {
		return "", Manifest{}, fmt.Errorf("%w: bundle %s is for %s/%s, this machine runs %s/%s",
			ErrBundleMismatch, dir, m.GOOS, m.GOARCH, runtime.GOOS, runtime.GOARCH)
	}
	return dir, m, nil
}

// OpenBundle opens the cluster bundle in dir and checks that the running
// gofault can run it (ReadManifest) and the catalog the node binary was
// built with; a test campaign's bundle is refused (gotest.OpenBundle
// opens it).
func OpenBundle(dir string) (*Bundle, error) {
	dir, m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if m.Kind != "" {
		return nil, fmt.Errorf("bundle %s is a %s campaign's (gofault %s --bundle), not a cluster's", dir, m.Kind, m.Kind)
	}
	b := &Bundle{Dir: dir, Manifest: m, Node: filepath.Join(dir, m.Node), Config: filepath.Join(dir, BundleConfig)}
	if m.Workload != "" {
		b.Workload = filepath.Join(dir, m.Workload)
	}
	for _, f := range []string{b.Node, b.Workload, b.Config} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("bundle %s: %w", dir, err)
		}
	}
	if b.Catalog, err = catalog.Load(filepath.Join(dir, BundleCatalog)); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	if b.Catalog.Hash != m.CatalogHash {
		return nil, fmt.Errorf("bundle %s: catalog.json has hash %s, the node binary was built with %s", dir, b.Catalog.Hash, m.CatalogHash)
	}
	return b, nil
}

// WriteJSONFile writes v as indented JSON, with a final newline, into
// file (a bundle's manifest and side files; gofault test's bundle too).
func WriteJSONFile(file string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}

func nonNil(ds []instrument.Dropped) []instrument.Dropped {
	if ds == nil {
		return []instrument.Dropped{}
	}
	return ds
}
