package scaffold

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gofault/gofault/config"
)

// ErrUsage marks an error in what gofault init was asked to write (a
// workload skeleton outside the module); gofault init exits 2 on it.
var ErrUsage = errors.New("usage")

// InitOptions are what Init writes: the config at Path (of target Name,
// default its directory's name), the workload skeleton in Workload
// (relative to Path's directory; "" for none), overwriting only with
// Force; Out hears what it wrote, Warn why it fell back to the generic
// template.
type InitOptions struct {
	Path, Name, Workload string
	Force                bool
	Out, Warn            io.Writer
}

// StarterHere is the starting config of target name for the module
// around the current directory, or the generic one outside a module.
func StarterHere(ctx context.Context, name string) config.Starter {
	s := config.Starter{Name: name}
	if m, err := Inspect(ctx, "."); err == nil {
		s = m.Starter(name, relDir(".", m.Dir), "")
	}
	return s
}

// Init writes the starting config to o.Path, and the workload skeleton
// into o.Workload (relative to o.Path's directory) when o.Path lies in a
// Go module, refusing to overwrite either unless o.Force is set; it says
// what it wrote on o.Out.
func Init(ctx context.Context, o InitOptions) error {
	path, name, workload, force, stdout := o.Path, o.Name, o.Workload, o.Force, o.Out
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
	m, ierr := Inspect(ctx, dir)
	if ierr != nil {
		fmt.Fprintf(o.Warn, "gofault init: %v; writing the generic template\n", ierr)
	} else {
		pkg := ""
		if workload != "" {
			wlDir := filepath.Join(dir, workload)
			rel := relDir(m.Dir, wlDir)
			if strings.HasPrefix(rel, "..") {
				return fmt.Errorf("%w: --workload %s is outside the module %s (workload.package is a package of target.module)", ErrUsage, workload, m.Dir)
			}
			if err := os.MkdirAll(wlDir, 0o755); err != nil {
				return fmt.Errorf("workload skeleton: %w", err)
			}
			file := filepath.Join(wlDir, "main.go")
			if err := writeNew(file, Workload(name, clientPort(m)), force); err != nil {
				return fmt.Errorf("%w (or --workload '' to write no skeleton)", err)
			}
			wrote = append(wrote, file)
			pkg = "./" + filepath.ToSlash(rel)
		}
		if pkg != "" { // a skeleton from an earlier init is no node program
			m.Mains = slices.DeleteFunc(m.Mains, func(x Main) bool { return samePkg(x.Path, pkg) })
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
		fmt.Fprintf(stdout, "module %s, read by gofault init (check each guess in the config):\n", m.Path)
		for _, g := range m.Guesses() {
			fmt.Fprintf(stdout, "  %s\n", g)
		}
	}
	fmt.Fprintf(stdout, "next: fill in cluster.command (an example is in the comment above it)")
	if len(wrote) > 0 {
		fmt.Fprintf(stdout, " and the workload's TODOs")
	}
	fmt.Fprintf(stdout, ", then\n  gofault build --config %s\n  gofault run --config %s --policy none --trials 5   # must be clean\n", path, path)
	return nil
}

// clientPort is the client port the workload skeleton talks to: the library's
// last port (its HTTP or client API), else "client".
func clientPort(m *Module) string {
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
