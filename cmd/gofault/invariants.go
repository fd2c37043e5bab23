package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/invariant"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// writeInvariants lists the invariants of the newest campaign of cfg's
// store that mined any (gofault analyze --invariants).
func writeInvariants(ctx context.Context, cfg *config.Config, asJSON bool, stdout io.Writer) error {
	path := cfg.Path(cfg.Store.DB)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no gofault database at %s: run a cofi campaign first (gofault run --policy cofi)", path)
	}
	st, err := store.OpenExisting(path)
	if err != nil {
		return err
	}
	defer st.Close()
	invs, id, err := campaign.Invariants(ctx, st)
	if err != nil {
		return err
	}
	if asJSON {
		if invs == nil {
			invs = []record.Invariant{}
		}
		return json.NewEncoder(stdout).Encode(map[string]any{"campaign": id, "invariants": invs})
	}
	return invariant.WriteTable(stdout, invs, id)
}
