package agent

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/gofault/gofault/agent/durable"
	"github.com/gofault/gofault/agent/wire"
)

// Power-loss crashes. With GOFAULT_POWERLOSS (the node's data dir) and
// GOFAULT_SYNC_SITES set, the agent keeps a durable image of the data dir
// (agent/durable): just before every sync site's real call it records the
// dir as durable. The runner rolls the dir back to the image between the
// kill and the restart of a power-loss crash. Without them, or without a
// controller, a hook costs what it did: the plan's sync bitmap is nil.

var (
	// syncSites is the bitmap of sync sites, set once by initPowerLoss
	// before the first plan; nil when no image is kept.
	syncSites []uint64
	image     *durable.Image
	// imageFailed is set once the image's error was reported.
	imageFailed atomic.Bool
)

// initPowerLoss reads the environment and records the first image.
func initPowerLoss() {
	dir, list := os.Getenv(wire.EnvPowerLoss), os.Getenv(wire.EnvSyncSites)
	if dir == "" {
		return
	}
	bits := parseSites(list)
	if bits == nil {
		return
	}
	im, err := durable.NewImage(dir)
	if err != nil {
		os.Stderr.WriteString("gofault-agent: no power-loss image: " + err.Error() + "\n")
		return
	}
	image, syncSites = im, bits
}

// parseSites turns "3,17,40" into a bitmap; nil for an empty or bad list.
func parseSites(list string) []uint64 {
	var bits []uint64
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 32)
		if err != nil {
			return nil
		}
		for uint64(len(bits)) <= n/64 {
			bits = append(bits, 0)
		}
		bits[n/64] |= 1 << (n % 64)
	}
	return bits
}

// synced records the durable image if site is a sync site.
func synced(site uint32, bits []uint64) {
	if w := site / 64; w >= uint32(len(bits)) || bits[w]&(1<<(site%64)) == 0 {
		return
	}
	if err := image.Synced(); err != nil && !imageFailed.Swap(true) {
		os.Stderr.WriteString("gofault-agent: power-loss image stopped: " + err.Error() + "\n")
	}
}
