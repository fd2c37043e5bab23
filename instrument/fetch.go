package instrument

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gofault/gofault/procgroup"
)

// FetchModule returns a writable copy of module path at version under
// root (root/<escaped path>@<version>), as the main module of a build:
// gofault bench runs a test bug's side on its module's source at the
// side's version (docs/bench.md). The source is fetched the go command's
// normal way, go mod download -json path@version: from GOPROXY into the
// read-only module cache, its hash checked against go.sum's rules and the
// checksum database (GOSUMDB) as for any other download. A complete copy
// already under root is reused; an interrupted one is made again.
func FetchModule(ctx context.Context, path, version, root string) (ModuleCopy, error) {
	dir, err := goModDownload(ctx, path, version)
	if err != nil {
		return ModuleCopy{}, fmt.Errorf("fetch module %s@%s: %w", path, version, err)
	}
	return copyModule(listedModule{Path: path, Version: version, Dir: dir}, root)
}

// goModDownload runs go mod download -json path@version outside any
// module (so that no go.mod or go.work pins another version) and returns
// the module's directory in the module cache.
func goModDownload(ctx context.Context, path, version string) (string, error) {
	tmp, err := os.MkdirTemp("", "gofault-fetch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := procgroup.Command(ctx, "go", "mod", "download", "-json", path+"@"+version)
	cmd.Dir, cmd.Env = tmp, goEnv(os.Environ())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := procgroup.Run(cmd)
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &m); err == nil && m.Error != "" {
		return "", fmt.Errorf("go mod download: %s", m.Error)
	}
	if runErr != nil {
		return "", fmt.Errorf("go mod download: %w: %s", runErr, strings.TrimSpace(stderr.String()))
	}
	if m.Dir == "" {
		return "", errors.New("go mod download named no directory")
	}
	return m.Dir, nil
}
