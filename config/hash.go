package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
)

// Hash returns a hex digest of the settings that must not change across a
// resume of a campaign: the target, the cluster, the workload, the fault
// kinds and the policy's name and seed. Trial counts, parallelism, timeouts
// of the campaign as a whole and paths of the store do not enter it.
func (c *Config) Hash() string {
	v := struct {
		Name     string
		Target   Target
		Cluster  Cluster
		Workload Workload
		Kinds    []string
		Policy   string
		Seed     int64
	}{c.Name, c.Target, c.Cluster, c.Workload, c.Faults.Kinds, c.Policy.Name, c.Policy.Seed}
	b, err := json.Marshal(v) // maps marshal with sorted keys: deterministic
	if err != nil {
		panic("config: hash: " + err.Error()) // plain data always marshals
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
