package analysis

import (
	"os"
	"testing"
)

// TestMain loads the testdata modules as the standalone modules they are:
// the repository's go.work (the root and agent modules, for development)
// lies above them and does not name them, so the go command would refuse
// to load them in workspace mode.
func TestMain(m *testing.M) {
	os.Setenv("GOWORK", "off")
	os.Exit(m.Run())
}
