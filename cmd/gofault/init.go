package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofault/gofault/config"
)

func init() {
	register(command{
		name:    "init",
		summary: "write a commented starting gofault.yaml for a new target",
		run:     runInit,
	})
}

func runInit(_ context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("init", os.Stderr)
	name := fs.String("name", "", "target name (default: the name of the output file's directory)")
	out := fs.String("o", "gofault.yaml", "output file (- for standard output)")
	force := fs.Bool("force", false, "overwrite an existing file")
	if err := fs.Parse(args); err != nil {
		return errors.Join(errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if *out == "-" {
		_, err := stdout.Write(config.Template(*name))
		return err
	}
	return writeInit(*out, *name, *force, stdout)
}

// writeInit writes the starting config to path, refusing to overwrite an
// existing file unless force is set.
func writeInit(path, name string, force bool, stdout io.Writer) error {
	if name == "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return fmt.Errorf("init: %w", err)
		}
		name = filepath.Base(filepath.Dir(abs))
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists; use --force to overwrite it", path)
	}
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if _, err := f.Write(config.Template(name)); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(stdout, "wrote %s; fill in cluster.command and the workload, then run \"gofault run --config %s\"\n", path, path)
	return nil
}
