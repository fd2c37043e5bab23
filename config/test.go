package config

import (
	"fmt"
	"path"
	"regexp"
)

// Test is the test section: what gofault test (a project's own Go tests
// as the workload) needs to know of the project beyond its flags.
type Test struct {
	// Member names the per-member value of an in-process cluster,
	// "pkg/path.Type.field": every method of Type tags the goroutine
	// running it with the member whose field it is, so that requests
	// are attributed to members (nodes n1, n2, ...) instead of the whole
	// test process being n1. E.g. "github.com/hashicorp/raft.Raft.localID".
	// Empty: the test process is one node.
	Member string `yaml:"member"`
	// Transport names the in-process transport the members send through,
	// so that partitions between members can cut their sends (needs
	// Member). Empty: only errors and delays are offered.
	Transport Transport `yaml:"transport"`
	// Setup names the tests' setup helpers: functions and methods
	// declared in the package's _test.go files that build what the tests
	// then test — a cluster started and waited for (nats-server's
	// "createJetStreamCluster*"). A helper that restarts a member is
	// better left out: its start-up runs the recovery code tests test.
	// Each is a path.Match pattern of a function's name, or of a method's
	// receiver type and name ("cluster.restart*"). While one of them runs,
	// no fault strikes the test process, in any goroutine: a fault in a
	// server's start-up, which the helper turns into a panic or a wait that
	// never ends, says nothing of the code under test. Empty: only files
	// other than _test.go that import "testing" are setup, and only in the
	// goroutine that calls them.
	Setup []string `yaml:"setup"`
}

// Transport is test.transport: the sends of an in-process transport
// between the members of one process, which a partition, disconnect,
// one-way cut or split of members fails.
type Transport struct {
	// Address is the field of the member type (test.member's type) that
	// holds the member's own transport address, e.g. "localAddr" for
	// hashicorp/raft's Raft: a send to that address goes to that member.
	Address string `yaml:"address" json:"address,omitempty"`
	// Send lists the transport's send methods, each
	// "pkg/path.Type.method(peer)" or "pkg/path.Type.method(from, peer)"
	// with peer the parameter (or receiver.field) that holds the address
	// sent to and from the one that holds the sender's own address (else
	// the sender is the member whose method the sending goroutine runs),
	// e.g. "github.com/hashicorp/raft.InmemTransport.makeRPC(i.localAddr,
	// target)". While the sender is cut from the member at that address,
	// the method returns at once with Error.
	Send []string `yaml:"send" json:"send,omitempty"`
	// Error is the text of the error a cut send returns (the method's
	// last result must be an error), as the transport says a peer is
	// unreachable, e.g. "failed to connect to peer". Empty: a
	// *net.OpError of a refused dial (ECONNREFUSED).
	Error string `yaml:"error" json:"error,omitempty"`
}

// sendRule matches a test.transport.send entry:
// pkg/path.Type.method(peer) or pkg/path.Type.method(from, peer).
var sendRule = regexp.MustCompile(`^[^\s]*[^\s./][.][A-Za-z_][A-Za-z0-9_]*[.][A-Za-z_][A-Za-z0-9_]*[(]` + addrExpr + `(, *` + addrExpr + `)?[)]$`)

// addrExpr matches an address expression of a send rule: a parameter or
// receiver.field (x.a.b too).
const addrExpr = `[A-Za-z_][A-Za-z0-9_]*([.][A-Za-z_][A-Za-z0-9_]*)*`

// setupPattern matches a test.setup entry: a function's name or
// Type.method, with path.Match's wildcards.
var setupPattern = regexp.MustCompile(`^[A-Za-z0-9_*?\[\]^-]+([.][A-Za-z0-9_*?\[\]^-]+)?$`)

// ident matches a Go identifier.
var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks the test section; each problem is a *FieldError naming
// the field and the fix.
func (t Test) Validate() error {
	for i, p := range t.Setup {
		if !setupPattern.MatchString(p) {
			return &FieldError{Field: fmt.Sprintf("test.setup[%d]", i), Msg: fmt.Sprintf("must be a function name or Type.method, * ? and [...] allowed (got %q)", p),
				Fix: `name a setup helper declared in the package's _test.go files, e.g. "createJetStreamCluster*" or "cluster.restartAll"`}
		}
		if _, err := path.Match(p, ""); err != nil {
			return &FieldError{Field: fmt.Sprintf("test.setup[%d]", i), Msg: fmt.Sprintf("%q is not a valid pattern: %v", p, err),
				Fix: `close every "[" of the pattern, e.g. "createJetStreamCluster*"`}
		}
	}
	if t.Member != "" && !roleField.MatchString(t.Member) {
		return &FieldError{Field: "test.member", Msg: fmt.Sprintf("must be pkg/path.Type.field (got %q)", t.Member),
			Fix: `set it to the struct field that tells the members of an in-process cluster apart, e.g. "member: github.com/hashicorp/raft.Raft.localID", or leave it out`}
	}
	tr := t.Transport
	if tr.Address == "" && len(tr.Send) == 0 && tr.Error == "" {
		return nil
	}
	if t.Member == "" {
		return &FieldError{Field: "test.transport", Msg: "needs test.member: a send is cut between two members, so the members must be told apart",
			Fix: `set test.member (e.g. "github.com/hashicorp/raft.Raft.localID"), or leave test.transport out`}
	}
	if len(tr.Send) == 0 {
		return &FieldError{Field: "test.transport.send", Msg: "is empty",
			Fix: `list the transport's send methods with their peer-address parameter, e.g. "- github.com/hashicorp/raft.InmemTransport.makeRPC(target)"`}
	}
	for i, s := range tr.Send {
		if !sendRule.MatchString(s) {
			return &FieldError{Field: fmt.Sprintf("test.transport.send[%d]", i), Msg: fmt.Sprintf("must be pkg/path.Type.method(peer) or pkg/path.Type.method(from, peer) (got %q)", s),
				Fix: `name the method, the parameter (or receiver.field) holding the sender's address and the one holding the address it sends to, e.g. "github.com/hashicorp/raft.InmemTransport.makeRPC(i.localAddr, target)"`}
		}
	}
	if !ident.MatchString(tr.Address) {
		return &FieldError{Field: "test.transport.address", Msg: fmt.Sprintf("must be a field name of the member type (got %q)", tr.Address),
			Fix: `name the field of test.member's type that holds the member's own transport address, e.g. "address: localAddr" for hashicorp/raft's Raft`}
	}
	return nil
}

// Partitions reports whether the section lets gofault test cut the
// members' sends (test.transport.send is set).
func (t Test) Partitions() bool { return len(t.Transport.Send) > 0 }

// LoadTest reads the test section of the config file at path, the only
// one gofault test uses (the rest need not be complete), and validates it.
func LoadTest(path string) (Test, error) {
	c, err := Load(path)
	if err != nil {
		return Test{}, err
	}
	if err := c.Test.Validate(); err != nil {
		return Test{}, fmt.Errorf("config %s: %w", path, err)
	}
	return c.Test, nil
}
