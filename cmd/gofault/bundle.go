package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/config"
)

// buildFlags are --rebuild and --bundle of the commands that run
// campaigns: what they run.
type buildFlags struct {
	rebuild *bool
	bundle  *string
}

func addBuildFlags(fs *flag.FlagSet) *buildFlags {
	return &buildFlags{
		rebuild: fs.Bool("rebuild", false, "build afresh even when an earlier build's inputs are unchanged"),
		bundle:  fs.String("bundle", "", "run the binaries of this bundle (gofault build --bundle) instead of building; its gofault.yaml is the default --config"),
	}
}

// configPath returns the config to load: --config when it was given, else
// with --bundle the bundle's.
func (b *buildFlags) configPath(fs *flag.FlagSet, cf *configFlags) string {
	if *b.bundle == "" || flagSet(fs, "config") {
		return *cf.path
	}
	return filepath.Join(*b.bundle, build.BundleConfig)
}

// built returns what a campaign of cfg runs: the bundle's binaries, or a
// build of cfg (reused while its inputs are unchanged, unless --rebuild).
func (b *buildFlags) built(ctx context.Context, cfg *config.Config) (*build.Built, error) {
	if *b.bundle == "" {
		return build.Binaries(ctx, cfg, build.Options{Rebuild: *b.rebuild}, slog.Default())
	}
	if *b.rebuild {
		return nil, fmt.Errorf("%w: --rebuild and --bundle: a bundle is never rebuilt where it runs", errUsage)
	}
	bd, err := build.OpenBundle(*b.bundle)
	if err != nil {
		return nil, err
	}
	return bd.Built(cfg)
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
