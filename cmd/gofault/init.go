package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

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
		_, err := stdout.Write(scaffold.StarterHere(ctx, *name).YAML())
		return err
	}
	return scaffold.Init(ctx, scaffold.InitOptions{Path: *out, Name: *name, Workload: *workload, Force: *force, Out: stdout, Warn: os.Stderr})
}
