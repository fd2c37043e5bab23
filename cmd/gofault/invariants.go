package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/config"
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
	if id == 0 {
		fmt.Fprintln(stdout, "no invariants: no cofi campaign has run fault-free trials yet (gofault run --policy cofi)")
		return nil
	}
	fmt.Fprintf(stdout, "%d invariants mined by campaign %d from its fault-free trials\n", len(invs), id)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "point\ttype\tinvariant\tobserved\ttrials")
	for _, v := range invs {
		fmt.Fprintf(tw, "%s\t%d\t%s == %s\t%d\t%d\n", v.Point, v.Type, v.A, v.B, v.Count, v.Trials)
	}
	return tw.Flush()
}
