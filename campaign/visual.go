package campaign

import (
	"os"
	"path/filepath"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/record"
)

// writeVisuals writes the drawings the checkers made of tr's evidence
// (check.Judgement.Visuals) into the trial's directory, where its verdicts
// point; a verdict whose drawing could not be written says why instead
// (check.Unwritten).
func writeVisuals(tr *record.Trial, visuals []check.Visual) {
	for _, vis := range visuals {
		if err := os.WriteFile(filepath.Join(tr.Dir, vis.Name), vis.Data, 0o666); err != nil {
			check.Unwritten(tr.Verdicts, tr.Dir, vis, err)
		}
	}
}
