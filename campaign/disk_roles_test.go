package campaign

import (
	"slices"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
)

// TestFileRolesAreTheCatalogs: faults.files accepts exactly the roles the
// analysis gives (config keeps its own list, as it does for fault kinds).
func TestFileRolesAreTheCatalogs(t *testing.T) {
	want := []string{catalog.FileLog, catalog.FileSnapshot, catalog.FileMetadata, catalog.FileData}
	if !slices.Equal(config.FileRoles, want) {
		t.Fatalf("config.FileRoles = %v, want the catalog's %v", config.FileRoles, want)
	}
	for _, k := range []catalog.Kind{catalog.KindCorrupt, catalog.KindTorn} {
		if !slices.Contains(config.FaultKinds, k.String()) {
			t.Errorf("config.FaultKinds lacks %s", k)
		}
	}
}
