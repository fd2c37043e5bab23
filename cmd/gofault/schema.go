package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/gofault/gofault/config"
)

func init() {
	register(command{
		name:    "config",
		summary: "config schema: print the JSON Schema of gofault.yaml (for editors; docs/gofault.schema.json)",
		run:     runConfig,
	})
}

func runConfig(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("config", os.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: gofault config schema\n\nPrints the JSON Schema of gofault.yaml, generated from gofault's config types.")
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "schema" {
		return fmt.Errorf("%w: want \"gofault config schema\", got %q", errUsage, pos)
	}
	out, err := configSchema()
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}

// configSchema is the JSON Schema of gofault.yaml with the policies,
// checkers and fault kinds this gofault knows.
func configSchema() ([]byte, error) {
	return config.JSONSchema(known())
}
