package record

// Coverage is a campaign's coverage: the union of the basic blocks its
// trials' nodes covered (the instrumented build's counters), as a bitmap
// over the blocks of one catalog.
type Coverage struct {
	// Catalog is the hash of the catalog whose blocks these are: a
	// rebuild that numbers blocks anew starts a new union.
	Catalog string `json:"catalog"`
	// Blocks is the number of blocks the build counts.
	Blocks int `json:"blocks"`
	// Covered is the number of blocks in Bits.
	Covered int `json:"covered"`
	// Bits has bit i%8 of byte i/8 set when block i was covered.
	Bits []byte `json:"bits"`
}

// NewCoverage returns an empty union over the blocks of a catalog.
func NewCoverage(catalog string, blocks int) *Coverage {
	return &Coverage{Catalog: catalog, Blocks: blocks, Bits: make([]byte, (blocks+7)/8)}
}

// Add adds blocks to the union and returns how many of them were new.
// Indices at or past Blocks are ignored.
func (c *Coverage) Add(blocks []uint32) int {
	added := 0
	for _, b := range blocks {
		if int(b) >= c.Blocks || int(b)/8 >= len(c.Bits) {
			continue
		}
		if m := byte(1) << (b % 8); c.Bits[b/8]&m == 0 {
			c.Bits[b/8] |= m
			added++
		}
	}
	c.Covered += added
	return added
}

// Has reports whether block b is in the union.
func (c *Coverage) Has(b uint32) bool {
	return int(b)/8 < len(c.Bits) && c.Bits[b/8]&(1<<(b%8)) != 0
}
