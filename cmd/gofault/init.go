package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/scaffold"
)

func init() {
	register(command{
		name:    "init",
		summary: "write a commented starting gofault.yaml (and a workload skeleton) for the Go module here",
		run:     runInit,
	})
}

func runInit(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("init", os.Stderr)
	name := fs.String("name", "", "target name (default: the name of the output file's directory)")
	out := fs.String("o", "gofault.yaml", "output file (- for standard output)")
	workload := fs.String("workload", "workload", "directory of the workload skeleton to write, relative to the output file ('' for none)")
	force := fs.Bool("force", false, "overwrite an existing config or workload skeleton")
	if err := fs.Parse(args); err != nil {
		return errors.Join(errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if *out == "-" {
		s := config.Starter{Name: *name}
		if m, err := scaffold.Inspect(ctx, "."); err == nil {
			s = m.Starter(*name, relDir(".", m.Dir), "")
		}
		_, err := stdout.Write(s.YAML())
		return err
	}
	return writeInit(ctx, *out, *name, *workload, *force, stdout)
}

// writeInit writes the starting config to path, and the workload skeleton
// into workload (relative to path's directory) when path lies in a Go
// module, refusing to overwrite either unless force is set.
func writeInit(ctx context.Context, path, name, workload string, force bool, stdout io.Writer) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	dir := filepath.Dir(abs)
	if name == "" {
		name = filepath.Base(dir)
	}
	if _, err := os.Stat(path); err == nil && !force {
		return fmt.Errorf("%s already exists; use --force to overwrite it", path)
	}
	s := config.Starter{Name: name}
	var wrote []string
	m, ierr := scaffold.Inspect(ctx, dir)
	if ierr != nil {
		fmt.Fprintf(os.Stderr, "gofault init: %v; writing the generic template\n", ierr)
	} else {
		pkg := ""
		if workload != "" {
			wlDir := filepath.Join(dir, workload)
			rel := relDir(m.Dir, wlDir)
			if strings.HasPrefix(rel, "..") {
				return fmt.Errorf("%w: --workload %s is outside the module %s (workload.package is a package of target.module)", errUsage, workload, m.Dir)
			}
			if err := os.MkdirAll(wlDir, 0o755); err != nil {
				return fmt.Errorf("workload skeleton: %w", err)
			}
			file := filepath.Join(wlDir, "main.go")
			if err := writeNew(file, scaffold.Workload(name, port(m)), force); err != nil {
				return fmt.Errorf("%w (or --workload '' to write no skeleton)", err)
			}
			wrote = append(wrote, file)
			pkg = "./" + filepath.ToSlash(rel)
		}
		s = m.Starter(name, relDir(dir, m.Dir), pkg)
	}
	if err := writeNew(path, s.YAML(), force); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s", path)
	for _, f := range wrote {
		fmt.Fprintf(stdout, " and %s", f)
	}
	fmt.Fprintln(stdout)
	if ierr == nil {
		fmt.Fprintf(stdout, "module %s: node program %s, packages %s", m.Path, orNone(s.Main), strings.Join(s.Packages, " "))
		if s.Library != "" {
			fmt.Fprintf(stdout, " (a %s service)", s.Library)
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "next: fill in cluster.command (an example is in the comment above it)")
	if len(wrote) > 0 {
		fmt.Fprintf(stdout, " and the workload's TODOs")
	}
	fmt.Fprintf(stdout, ", then\n  gofault build --config %s\n  gofault run --config %s --policy none --trials 5   # must be clean\n", path, path)
	return nil
}

// port is the client port the workload skeleton talks to: the library's
// last port (its HTTP or client API), else "client".
func port(m *scaffold.Module) string {
	if m.Library != nil {
		return m.Library.Ports[len(m.Library.Ports)-1]
	}
	return "client"
}

// relDir is target relative to base in slash form, "." when equal.
func relDir(base, target string) string {
	b, err1 := filepath.Abs(base)
	t, err2 := filepath.Abs(target)
	if err1 != nil || err2 != nil {
		return target
	}
	rel, err := filepath.Rel(b, t)
	if err != nil {
		return target
	}
	return filepath.ToSlash(rel)
}

func orNone(s string) string {
	if s == "" {
		return "(none found: set target.main)"
	}
	return s
}

// writeNew writes data to path, refusing to overwrite it unless force is
// set.
func writeNew(path string, data []byte, force bool) error {
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
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
