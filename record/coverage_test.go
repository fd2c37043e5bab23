package record

import "testing"

func TestCoverageAdd(t *testing.T) {
	c := NewCoverage("h", 20)
	for _, step := range []struct {
		blocks []uint32
		added  int
	}{
		{[]uint32{0, 7, 8}, 3},
		{[]uint32{7, 8, 9, 9}, 1},   // repeats are not new
		{[]uint32{19, 20, 1000}, 1}, // past the catalog's blocks: ignored
		{nil, 0},
	} {
		if got := c.Add(step.blocks); got != step.added {
			t.Errorf("Add(%v) = %d, want %d", step.blocks, got, step.added)
		}
	}
	if c.Covered != 5 || !c.Has(19) || c.Has(20) || c.Has(1) {
		t.Errorf("union %+v", c)
	}
}
