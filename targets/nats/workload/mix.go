package main

import (
	"math/rand/v2"

	"github.com/gofault/gofault/workload"
)

// The operations of the mix (NATS_WORKLOAD_MIX names them by opNames).
const (
	opPublish      = iota // an acknowledged publish to a random S stream
	opFetch               // fetch and ack from the client's durable on an S stream
	opFetchNak            // fetch from the durable, nak some, ack the rest
	opInfo                // stream info of an S stream
	opAPIPublish          // an acknowledged publish to stream A
	opPurge               // purge all of stream A
	opPurgeSubject        // purge one of the client's subjects of stream A
	opDeleteMsg           // delete one acknowledged message of stream A
	opUpdate              // update stream A's configuration (its description)
	opScale               // change stream A's replica count (1, 3, 2, 3, …)
	opKVGet               // get a key of bucket KV
	opKVPut               // put a key
	opKVDelete            // delete a key
	opKVUpdate            // create or update a key at the revision last seen
	opObject              // put an object into bucket OBJ and get it back
	numOps
)

var opNames = [numOps]string{
	"publish", "fetch", "fetch-nak", "info",
	"a-publish", "purge", "purge-subject", "delete-msg", "update", "scale",
	"kv-get", "kv-put", "kv-delete", "kv-update", "object",
}

// mix is the weight of each operation.
type mix [numOps]int

// defaultMix keeps about half of the operations the publishes to the S
// streams that the recovery, replica and read-back checks judge, and
// spreads the rest over the API; one operation per 1/NATS_WORKLOAD_RATE,
// so a trial is as long as before.
var defaultMix = mix{
	opPublish: 44, opFetch: 8, opFetchNak: 6, opInfo: 4,
	opAPIPublish: 10, opPurge: 1, opPurgeSubject: 2, opDeleteMsg: 3, opUpdate: 1, opScale: 1,
	opKVGet: 8, opKVPut: 5, opKVDelete: 2, opKVUpdate: 6, opObject: 2,
}

// parseMix reads "publish=30,kv-get=20,…"; operations not named get 0.
func parseMix(v string) (mix, error) {
	w, err := workload.ParseWeights("NATS_WORKLOAD_MIX", v, opNames[:])
	if err != nil {
		return mix{}, err
	}
	return mix(w), nil
}

// String returns the mix in NATS_WORKLOAD_MIX's form.
func (m *mix) String() string { return workload.FormatWeights(opNames[:], m[:]) }

// pick draws an operation by weight.
func (m *mix) pick(rng *rand.Rand) int { return workload.PickWeighted(rng, m[:]) }

// uses says whether the mix has any of the operations.
func (m *mix) uses(ops ...int) bool {
	for _, op := range ops {
		if m[op] > 0 {
			return true
		}
	}
	return false
}
