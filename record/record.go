// Package record defines the plain records of a campaign's trials —
// injections, node exits, workload events and verdicts — shared by the
// controller, the runner, the checkers, the store and the reports.
package record

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
)

// Frame is one frame of a call stack.
type Frame struct {
	Func string `json:"func"`
	File string `json:"file"`
	Line int    `json:"line"`
}

// CallerStack returns stack (an injection's, from the hook's caller down)
// without the function literals the instrumentation wraps around the calls
// of fault sites: such a literal is called where it is written, so its
// frame, named like a closure (Save.func1), has the very file and line of
// the frame below it (Save). The struck site's own literal tops the stack;
// an enclosing site's (a Commit that is a site itself, on the way to the
// struck write) is further down. A stack without one is returned as it is.
func CallerStack(stack []Frame) []Frame {
	var out []Frame
	for i, f := range stack {
		if Wrapper(stack, i) {
			if out == nil {
				out = slices.Clone(stack[:i])
			}
			continue
		}
		if out != nil {
			out = append(out, f)
		}
	}
	if out == nil {
		return stack
	}
	return out
}

// Wrapper reports whether stack[i] is a function literal the
// instrumentation wraps around a site's call, one CallerStack leaves out:
// named like a closure, at the very file and line of the frame below it.
// It lets a caller walk a stack's callers without the copy CallerStack
// makes.
func Wrapper(stack []Frame, i int) bool {
	f := stack[i]
	return i+1 < len(stack) && f.File == stack[i+1].File && f.Line == stack[i+1].Line && isClosure(f.Func)
}

// isClosure reports whether fn names a function literal (pkg.F.func1,
// pkg.(*T).M.func2.1).
func isClosure(fn string) bool {
	i := strings.LastIndex(fn, ".func")
	if i < 0 {
		return false
	}
	rest := fn[i+len(".func"):]
	if rest == "" {
		return false
	}
	for _, c := range rest {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

// Injection is one fault the controller injected.
type Injection struct {
	Time   time.Time    `json:"time"`
	Node   string       `json:"node"`
	Site   uint32       `json:"site"`    // catalog index
	SiteID string       `json:"site_id"` // stable site ID
	Kind   catalog.Kind `json:"kind"`    // a single catalog.Kind: KindError, KindDelay, KindCrash, KindPartition, KindDisconnect, KindOneWay, KindSplit, KindLeaderCut, KindPowerLoss, KindReboot, KindCorrupt, KindTorn, KindPause, KindStop or KindRot
	// Error names the injected error value for KindError, e.g. "EIO";
	// for a partition a policy started at an observation point (SiteID
	// "observe:..."), what started it (cofi: the violated invariant); for
	// KindCorrupt, KindTorn and KindRot the pick (policy.PickText) and what the
	// agent changed, "pick 0x1f: bit 3 of byte 17 of a 72-byte read of
	// /data/wal-000001.log flipped".
	Error string `json:"error,omitempty"`
	// Delay is the injected delay for KindDelay, or how long a cut lasted
	// (catalog.Kind.Cuts: the node from its peers for KindPartition and
	// KindLeaderCut, from Peer for KindDisconnect and KindOneWay, its
	// side from the other for KindSplit), its heal included.
	Delay time.Duration `json:"delay,omitempty"`
	Stack []Frame       `json:"stack,omitempty"`
	// Occurrence counts the requests at this site from this node in the
	// trial up to this one (1 for the first): a replay injects at the
	// same occurrence, not at the first request that matches.
	Occurrence int `json:"occurrence,omitempty"`
	// Task, Inst and State locate the goroutine's abstract state, if any.
	Task    uint32 `json:"task,omitempty"`
	Inst    uint64 `json:"inst,omitempty"`
	State   uint32 `json:"state,omitempty"`
	StateID string `json:"state_id,omitempty"`
	// Role is the node's role when the fault struck (the name of the
	// catalog's role constant, e.g. "StateLeader"); "" when unknown.
	Role string `json:"role,omitempty"`
	// Observer is, for a partition started at an observation point, the
	// node that made the observation when it is not the cut node (cofi
	// cuts a message's receiver at the sender's send): Occurrence counts
	// its observations at the point.
	Observer string `json:"observer,omitempty"`
	// Peer is, for KindDisconnect, the member cut apart from Node; for
	// KindOneWay, the member Node could not reach (Peer still reached
	// Node); for KindSplit, the member Node's call talked to when the
	// split started, on the other side; for a KindDelay at a peer-network
	// call, the member at the call's other end (its messages to or from
	// Node were the ones slowed), when the call's peer was known.
	Peer string `json:"peer,omitempty"`
	// Side is, for KindSplit, the other members on Node's side (the
	// minority): Node and Side were cut from every other member, both
	// ways, and each side's members still reached each other.
	Side []string `json:"side,omitempty"`
	// Until is, for a cut held until a condition (KindPartition,
	// KindLeaderCut, KindDisconnect, KindOneWay, KindSplit) or a delay held
	// until one (KindDelay: the call slept until it), the condition:
	// "leader" (leadership moved), "requests=K" (the clients of the
	// members not cut, or not delayed, made K more requests that
	// succeeded), "site=S" (another member reached a site whose stable
	// ID contains S) or "behind=N" (the cut or delayed members fell N
	// entries behind the others' commit index); Cap the longest it could
	// last.
	// Delay is its real length.
	Until string        `json:"until,omitempty"`
	Cap   time.Duration `json:"cap,omitempty"`
	// Met says what met Until, e.g. "n2 became StateLeader", "n1 reached
	// p.(*Node).writeSnapshot:os.Rename#0", "n3 was 57 entries behind:
	// commit 212 at the others, 155 at n3 when cut"; "" when the cut
	// healed, or the delay ended, at its cap.
	Met string `json:"met,omitempty"`
}

// OnLeader reports whether a replay strikes in again on whichever member
// leads rather than on in.Node: a leadercut, or a fault whose member led
// when it struck (in.Role is role's leader value, catalog.Role.Leader),
// other than a cut between named members (disconnect, oneway, split:
// their peers and sides are members' names). Which member wins an
// election is not a trial's to repeat.
func (in Injection) OnLeader(role *catalog.Role) bool {
	switch in.Kind {
	case catalog.KindLeaderCut:
		return true
	case catalog.KindDisconnect, catalog.KindOneWay, catalog.KindSplit:
		return false
	}
	leader, ok := role.Leader()
	return ok && in.Role == leader
}

// Held says, for a cut or delay held until a condition, what it was held
// until and how it ended, to follow its length in a report: " until the
// leader moved (n2 became StateLeader)", " until another member reached
// SaveSnap (n1 reached …SaveSnap:…#0)", " until 20 entries behind (n3
// was 57 entries behind: …)", " until requests=64 (not met: healed at its
// 15s cap)", for a delay " … (not met: ended at its 15s cap)"; "" for any
// other fault.
func (in Injection) Held() string {
	if in.Until == "" {
		return ""
	}
	what := in.Until
	if what == "leader" {
		what = "the leader moved"
	} else if sub, ok := strings.CutPrefix(what, "site="); ok {
		what = "another member reached " + sub
	} else if n, ok := strings.CutPrefix(what, "behind="); ok {
		what = n + " entries behind"
	}
	if in.Met == "" {
		end := "healed"
		if in.Kind == catalog.KindDelay {
			end = "ended"
		}
		return fmt.Sprintf(" until %s (not met: %s at its %s cap)", what, end, in.Cap)
	}
	return fmt.Sprintf(" until %s (%s)", what, in.Met)
}

// Shape says how a fault struck, where its kind alone does not, to follow
// the site and node in a report: for a fault that struck right after its
// call returned (catalog.KindCrashAfter, KindPowerLossAfter) " (killed
// right after fileutil.Fdatasync returned)", " (power lost right after
// (*os.File).Sync returned: what was not synced is gone)", with detail,
// the function's next disk call (catalog.Site.Next), ", before its next
// disk call, os.Rename" in them; for a pause " (the whole process stopped,
// then went on; 2 × election)", for a stop " (down, then started again; ½
// × election)", with detail, how the fault's length was chosen; "" for
// any other fault. detail is the injection's Error of those kinds. The
// call is read from the site's ID (pkg.func:callee#n).
func Shape(k catalog.Kind, siteID, detail string) string {
	timer := ""
	if detail != "" {
		timer = "; " + detail
	}
	switch k {
	case catalog.KindPause:
		return " (the whole process stopped, then went on" + timer + ")"
	case catalog.KindStop:
		return " (down, then started again" + timer + ")"
	}
	if !k.After() {
		return ""
	}
	call := siteID
	if i := strings.LastIndex(call, ":"); i >= 0 {
		call = call[i+1:]
	}
	if i := strings.LastIndex(call, "#"); i >= 0 {
		call = call[:i]
	}
	next := ""
	if detail != "" {
		next = ", before its next disk call, " + detail
	}
	if k == catalog.KindPowerLossAfter {
		return " (power lost right after " + call + " returned" + next + ": what was not synced is gone)"
	}
	return " (killed right after " + call + " returned" + next + ")"
}

// ShapeDetail returns errText, an injection's Error, where it is the
// detail Shape gives a fault of kind k (how a pause's or stop's length was
// chosen, the next disk call after a crash after a call); "" for the
// kinds whose Error says something else (an error's name, a disk fault's
// pick).
func ShapeDetail(k catalog.Kind, errText string) string {
	if k == catalog.KindPause || k == catalog.KindStop || k.After() {
		return errText
	}
	return ""
}

// CutPeers says, for a cut that names other members, whom the node was
// cut from and which way, to follow the node's name in a report: " from
// n2" (a disconnect, both ways), " to n2, one way (n1 could not reach
// n2; n2 still reached n1)" (a one-way cut), " with n2 from n3, n4, n5,
// both ways" (a split; members are the trial's members, nil: "the other
// members"); "" for any other fault.
func (in Injection) CutPeers(members []string) string {
	switch in.Kind {
	case catalog.KindDelay:
		if in.Peer != "" {
			return ", its call with " + in.Peer
		}
	case catalog.KindDisconnect:
		if in.Peer != "" {
			return " from " + in.Peer
		}
	case catalog.KindOneWay:
		return " to " + in.Peer + ", one way (" + in.Node + " could not reach " + in.Peer + "; " + in.Peer + " still reached " + in.Node + ")"
	case catalog.KindSplit:
		s := ""
		if len(in.Side) > 0 {
			s = " with " + strings.Join(in.Side, ", ")
		}
		rest := "the other members"
		if _, r := in.SplitSides(members); len(members) > 0 {
			rest = strings.Join(r, ", ")
		}
		return s + " from " + rest + ", both ways"
	}
	return ""
}

// SplitSides returns the two sides of a KindSplit injection among the
// trial's members (names): Node with Side, and the rest, each sorted.
func (in Injection) SplitSides(members []string) (struck, rest []string) {
	struck = append([]string{in.Node}, in.Side...)
	for _, m := range members {
		if !slices.Contains(struck, m) {
			rest = append(rest, m)
		}
	}
	slices.Sort(struck)
	return struck, rest
}

// NodeRole is "n2 (StateLeader)", or the node alone when the role is
// unknown: how reports name where a fault struck.
func NodeRole(node, role string) string {
	if role == "" {
		return node
	}
	return node + " (" + role + ")"
}

// Reach counts the requests that arrived at one site in one role and
// abstract state in a trial: where a fault at the site could strike.
type Reach struct {
	Site   uint32 `json:"site"`
	SiteID string `json:"site_id"`
	// Role is the asking node's role ("" when unknown), State the ID of
	// the asking goroutine's abstract state ("" when none).
	Role     string `json:"role,omitempty"`
	State    string `json:"state,omitempty"`
	Requests int    `json:"requests"`
}

// RoleChange is a node taking a role during a trial.
type RoleChange struct {
	Node string    `json:"node"`
	Role string    `json:"role"`
	Time time.Time `json:"time"`
}

// StateVisit is how often one abstract state was entered on a node in a
// trial: the transitions into it, over all instances of its task (a state
// re-entered without leaving it does not count again), and when first.
// A trial keeps visits, not every transition: etcd's three members make
// hundreds of thousands of transitions in a ten-second trial.
type StateVisit struct {
	Node    string    `json:"node"`
	Task    uint32    `json:"task"`
	State   uint32    `json:"state"`
	Entries int       `json:"entries"`
	First   time.Time `json:"first"`
}

// Timeout is a timeout value observed at run time.
type Timeout struct {
	Node     string        `json:"node"`
	Site     uint32        `json:"site"`
	Duration time.Duration `json:"duration"`
}

// Node is what the runner saw of one node process.
type Node struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
	// Exited is set when the process ended before the runner stopped it.
	Exited   bool      `json:"exited"`
	ExitTime time.Time `json:"exit_time,omitempty"`
	ExitCode int       `json:"exit_code"`
	Signal   string    `json:"signal,omitempty"`
	// Killed is set when gofault itself killed the node (a crash fault or
	// a requested restart), so the crash checker does not report it.
	Killed bool `json:"killed,omitempty"`
	// Restarts counts restarts requested during the trial.
	Restarts int `json:"restarts,omitempty"`
	// Restarted are the times the restarts started the process again
	// (after a crash's kill, a reboot's shutdown), in order.
	Restarted []time.Time `json:"restarted,omitempty"`
	// RestartErr says why the node did not come back when gofault
	// restarted it after a crash fault (it exited, or never got ready).
	RestartErr string `json:"restart_err,omitempty"`
	Log        string `json:"log"` // path of the node's combined stdout/stderr
}

// Client event kinds.
const (
	EvProgress  = "progress"  // a request succeeded
	EvError     = "error"     // a request failed
	EvOp        = "op"        // a completed operation for the history checkers
	EvViolation = "violation" // the workload itself saw a guarantee broken
	EvPhase     = "phase"     // a phase finished (Msg names it)
	// EvHealthy and EvUnhealthy carry what the system itself said about the
	// client's node (a health endpoint or status call), for the
	// gray-failure checker.
	EvHealthy   = "healthy"
	EvUnhealthy = "unhealthy"
	// EvDigest is a member's digest of its data at a point all members
	// reach (Msg names the point, Digest holds the digest), for the
	// replicas checker.
	EvDigest = "digest"
	// EvNotJudged says the workload could not judge the trial (Msg says
	// why): it could not set up what its checks need (a stream, a
	// consumer) because the system refused it after a fault. Such a
	// trial's status is StatusNotJudged unless a checker failed.
	EvNotJudged = "not_judged"
)

// HealthLeader is the Msg of an EvHealthy event that says the client's node
// is the cluster's leader (workload.Client.Leader): the node a campaign's
// calibration trial kills to measure a failover.
const HealthLeader = "leader"

// ClientEvent is one event a workload client reported.
type ClientEvent struct {
	Time   time.Time `json:"time"`
	Client string    `json:"client"` // e.g. "n2/0"
	Node   string    `json:"node"`   // the node the client talks to
	Kind   string    `json:"kind"`   // Ev*
	Msg    string    `json:"msg,omitempty"`
	// Sent is when the client sent the request whose outcome an
	// EvProgress or EvError reports (for a request retried until it
	// succeeded, the first try); zero when unknown. An EvOp's is its
	// Op.Call. Before it, back to the client's previous event, the client
	// asked nothing — it was idle at a barrier of its workload, or done —
	// which the progress checkers do not count as a stall.
	Sent time.Time `json:"sent,omitempty"`
	// Checker names the guarantee for EvViolation, e.g. "watch-order".
	Checker string `json:"checker,omitempty"`
	// Digest is the member's digest for EvDigest.
	Digest string `json:"digest,omitempty"`
	Op     *Op    `json:"op,omitempty"`
}

// Op is one key-value operation of a workload history.
type Op struct {
	Kind   string `json:"kind"` // "get", "put", "delete", "cas"
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`  // written value (put, cas new value)
	Expect string `json:"expect,omitempty"` // cas expected value
	// Out is the value read (get) or whether cas succeeded ("true"/"false").
	Out string `json:"out,omitempty"`
	// Unknown marks an operation whose outcome the client could not learn
	// (a timeout): it may or may not have taken effect.
	Unknown bool  `json:"unknown,omitempty"`
	Call    int64 `json:"call"`   // unix nanoseconds
	Return  int64 `json:"return"` // unix nanoseconds
}

// Verdict is one checker's judgement of a trial.
type Verdict struct {
	Checker string `json:"checker"`
	Failed  bool   `json:"failed"`
	// Unknown is set when the checker could not decide (e.g. the
	// linearizability search timed out); such a verdict is not a failure.
	Unknown bool `json:"unknown,omitempty"`
	// Symptom is a short, stable description used to cluster findings,
	// e.g. "client n2/0 made no progress for 10s".
	Symptom string `json:"symptom,omitempty"`
	// Symptoms are every failing symptom of the verdict when the checker
	// saw several distinct ones (the log checker: one per new log
	// template), most important first; Symptom is the first. Reports use
	// them to tell a symptom that follows many unrelated faults (a generic
	// consequence) from one that follows few.
	Symptoms []string `json:"symptoms,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	Nodes    []string `json:"nodes,omitempty"`
	// Dismissed are the lines the checker saw and dismissed by a named
	// rule as the expected consequence of a fault (the log checker), so
	// that a user can audit what a rule hid.
	Dismissed []Dismissal `json:"dismissed,omitempty"`
	// Lasting are those of Symptoms (the log checker's) whose lines went
	// on after the window of every fault of the trial had closed: not a
	// passing reaction to a fault but a state the system stayed in, so
	// the generic-consequence rule never takes them for what the system
	// logs after faults in general (report.New).
	Lasting []string `json:"lasting,omitempty"`
	// BeforeFaults are those of Symptoms (the log checker's) whose every
	// line came before the trial's first fault was injected: no fault
	// caused them, whatever the trial injected later (report.New says so
	// under the finding).
	BeforeFaults []string `json:"before_faults,omitempty"`
}

// Informational reports whether the verdict passed the trial with a
// note: something the checker saw and excused or found harmless (a
// corruption the node detected and refused, a stall the profile excuses),
// which the checkers mark with a Symptom that starts "informational".
func (v *Verdict) Informational() bool {
	return !v.Failed && strings.HasPrefix(v.Symptom, "informational")
}

// Dismissal is a group of log lines one rule dismissed on one node in a
// trial: lines of one template, counted, with one raw example.
type Dismissal struct {
	// Rule names the rule (check.LogRules), e.g. "connection-words".
	Rule string `json:"rule"`
	Node string `json:"node"`
	// Template is the lines' normalised identity (check.LogLine.Template).
	Template string `json:"template"`
	Count    int    `json:"count"`
	// Example is the first dismissed line as logged.
	Example string `json:"example"`
	// Why says what the rule tied the lines to: the fault and how the
	// line was placed ("crash of n2 at +1.200s, on n2"), the injected
	// error text, the ignore pattern.
	Why string `json:"why,omitempty"`
}

// Status is a judged trial's outcome.
type Status string

// Trial statuses.
const (
	StatusOK     Status = "ok"     // every checker passed
	StatusFailed Status = "failed" // some verdict failed: a finding
	StatusError  Status = "error"  // the trial could not run (e.g. the cluster never became ready)
	// StatusNotJudged: the trial ran but could not be judged (the
	// workload said so with EvNotJudged, Trial.Err says why); never
	// counted as ok.
	StatusNotJudged Status = "not_judged"
)

// BaselinePolicy is the policy recorded for a campaign's fault-free
// baseline trials (Trial.Policy), which are not fault trials.
const BaselinePolicy = "baseline"

// TrialID is the ID of trial index of campaign campaignID: "3-17".
func TrialID(campaignID int64, index int) string {
	return strconv.FormatInt(campaignID, 10) + "-" + strconv.Itoa(index)
}

// ParseTrialID splits an ID made by TrialID into its campaign ID and trial
// index; ok is false if id is not one.
func ParseTrialID(id string) (campaignID int64, index int, ok bool) {
	c, i, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	campaignID, err1 := strconv.ParseInt(c, 10, 64)
	index, err2 := strconv.Atoi(i)
	if err1 != nil || err2 != nil || campaignID < 0 || index < 0 {
		return 0, 0, false
	}
	return campaignID, index, true
}

// Trial is everything recorded about one trial.
type Trial struct {
	ID         string        `json:"id"`
	Campaign   string        `json:"campaign"`
	Index      int           `json:"index"`
	Policy     string        `json:"policy"`
	Seed       int64         `json:"seed"`
	Start      time.Time     `json:"start"`
	End        time.Time     `json:"end"`
	Status     Status        `json:"status"`
	Err        string        `json:"err,omitempty"`
	Dir        string        `json:"dir"` // data and logs of the trial
	Injections []Injection   `json:"injections"`
	Requests   int           `json:"requests"` // decisions asked in the trial
	Nodes      []Node        `json:"nodes"`
	Client     []ClientEvent `json:"client,omitempty"`
	States     []StateVisit  `json:"states,omitempty"`
	Timeouts   []Timeout     `json:"timeouts,omitempty"`
	// Reached counts the requests by site, role and state (bounded; see
	// controller.maxReached).
	Reached []Reach `json:"reached,omitempty"`
	// Roles are the nodes' role changes, in time order (bounded).
	Roles    []RoleChange `json:"roles,omitempty"`
	Verdicts []Verdict    `json:"verdicts"`
	// Blocks counts the coverage blocks (catalog.Catalog.Blocks) the
	// trial's nodes covered; NewBlocks those of them that no trial of the
	// campaign that ended before it had covered. The campaign's coverage
	// is the sum of NewBlocks over its trials.
	Blocks    int `json:"blocks"`
	NewBlocks int `json:"new_blocks"`
	// Choice is the technique that a policy choosing one per trial
	// (policy.Explainer: portfolio) handed the trial to, e.g. "fuzz", and
	// Why says why, for the user: the evidence that chose it and what the
	// technique did. Both are empty for a policy that does not explain
	// itself, a baseline trial, a replay and a trial stored before they
	// were kept.
	Choice string `json:"choice,omitempty"`
	Why    string `json:"why,omitempty"`
	// Observations are the peer messages observed (fault-free trials and
	// cofi's trials; bounded, not stored).
	Observations []Observation `json:"observations,omitempty"`
}
