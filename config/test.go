package config

import "fmt"

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
}

// Validate checks the test section; each problem is a *FieldError naming
// the field and the fix.
func (t Test) Validate() error {
	if t.Member != "" && !roleField.MatchString(t.Member) {
		return &FieldError{Field: "test.member", Msg: fmt.Sprintf("must be pkg/path.Type.field (got %q)", t.Member),
			Fix: `set it to the struct field that tells the members of an in-process cluster apart, e.g. "member: github.com/hashicorp/raft.Raft.localID", or leave it out`}
	}
	return nil
}

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
