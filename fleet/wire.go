// Package fleet runs a campaign's trials on many machines through NATS
// JetStream: a coordinator (gofault run --queue) keeps the campaign's
// policy and store, publishes its bundle to an object store and its fault
// trials to a work-queue stream; workers (gofault worker) run them with the
// bundle's binaries and send back each trial's record and files.
//
// A worker's controller asks the coordinator's policy for the trial's plan
// when it starts the trial and for every decision while it runs (NATS
// request-reply), so the policy sees the same calls, serialised in the same
// way, as for a local trial; the coordinator tells it each outcome in the
// order the results arrive. A trial whose worker dies is redelivered after
// its ack deadline and planned afresh; a second result for a recorded
// trial is dropped and logged. docs/distributed.md says what crosses the
// network.
//
// This file holds the wire messages: plain data, JSON on the wire.
package fleet

import (
	"time"

	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// Names of the JetStream stream, its consumer and the object store bucket.
const (
	// Stream is the work-queue stream of trials; each is published on
	// TrialSubject(coordinator).
	Stream = "GOFAULT_TRIALS"
	// Consumer is the durable pull consumer every worker shares.
	Consumer = "gofault-workers"
	// Bucket is the object store of bundles, baselines, records and
	// trial files.
	Bucket = "gofault"
)

// TrialSubject is the subject a coordinator publishes its trials on.
func TrialSubject(coordinator string) string { return "gofault.trials." + coordinator }

// callSubject is the subject a coordinator answers call on: "begin",
// "decide", "observe" or "result".
func callSubject(coordinator, call string) string { return "gofault.c." + coordinator + "." + call }

// Task is one trial in the work queue.
type Task struct {
	// Coordinator is the key of the coordinator that published it: the
	// subjects of its calls.
	Coordinator string `json:"coordinator"`
	Campaign    int64  `json:"campaign"`
	Index       int    `json:"index"`
	ID          string `json:"id"`
	// Policy is the name of the campaign's policy (recorded with the
	// trial).
	Policy string `json:"policy"`
	// Bundle, Config and Baseline are objects of Bucket, each named by
	// its SHA-256: the bundle's files (a gzip'd tar), the campaign's
	// resolved config (YAML: the bundle's binaries run it, its overrides
	// included) and the log baseline (JSON).
	Bundle   string `json:"bundle"`
	Config   string `json:"config"`
	Baseline string `json:"baseline"`
	// Bound is the hang and gray checkers' progress bound (a test
	// campaign's: the test's hang bound).
	Bound time.Duration `json:"bound"`
	// Test and Reach are a test campaign's trial's (gofault test
	// --queue; its bundle is a test bundle and Config empty): the test
	// to run and its live sites, the catalog indices it reached
	// fault-free (never nil there: an empty Reach leaves none live).
	Test  string   `json:"test,omitempty"`
	Reach []uint32 `json:"reach"`
	// Again runs the test twice in its process (engine.RemoteJob.Again).
	Again bool `json:"again,omitempty"`
	// LeftChecked and Left are the test's baseline of the leak check
	// (engine.RemoteJob.LeftChecked, Left).
	LeftChecked bool     `json:"left_checked,omitempty"`
	Left        []string `json:"left,omitempty"`
}

// Delivery names one delivery of a trial: Index and the delivery's
// number, Attempt (JetStream's NumDelivered), and the worker it went to.
type Delivery struct {
	Index   int    `json:"index"`
	Attempt int    `json:"attempt"`
	Worker  string `json:"worker,omitempty"`
}

// BeginRequest asks for the plan of a trial about to start.
type BeginRequest struct {
	Delivery
	Nodes []string `json:"nodes"`
}

// BeginReply is the plan, or why the trial must not run.
type BeginReply struct {
	Plan policy.Plan `json:"plan"`
	// Recorded says the trial is recorded already: drop the task.
	Recorded bool   `json:"recorded,omitempty"`
	Err      string `json:"err,omitempty"`
}

// DecideRequest is one policy request of a running trial; Request.Site
// travels as its catalog index (Site).
type DecideRequest struct {
	Delivery
	Site    uint32         `json:"site"`
	Request policy.Request `json:"request"`
}

// DecideReply answers a DecideRequest.
type DecideReply struct {
	Decision policy.Decision `json:"decision"`
}

// ObserveRequest is one observation of a running trial; Point is the
// observation point's catalog index.
type ObserveRequest struct {
	Delivery
	Point       uint32             `json:"point"`
	Observation record.Observation `json:"observation"`
}

// ObserveReply answers an ObserveRequest.
type ObserveReply struct {
	Partition policy.Partition `json:"partition"`
}

// ResultRequest says a trial ran: its judged record and its files (a
// gzip'd tar of the trial dir's files) are objects of Bucket.
type ResultRequest struct {
	Delivery
	Record string `json:"record"`
	Files  string `json:"files"`
	Outcome
}

// Outcome is what a trial's judged record does not carry and the
// coordinator needs: the coverage blocks it covered, and a test trial's
// in-process member counts (controller.Result's, for gofault test's
// summary).
type Outcome struct {
	Blocks         []uint32            `json:"blocks,omitempty"`
	Members        []controller.Member `json:"members,omitempty"`
	MemberRequests int                 `json:"member_requests,omitempty"`
	MemberSends    int                 `json:"member_sends,omitempty"`
}

// ResultReply acknowledges a ResultRequest: Err empty once the trial is
// recorded (or was already).
type ResultReply struct {
	Err string `json:"err,omitempty"`
}
