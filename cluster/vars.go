package cluster

import (
	"fmt"
	"strings"
	"text/template"

	"github.com/gofault/gofault/agent/wire"
)

// NodeVars are the variables of one node that the command, env and ready
// templates of config.Cluster see, e.g. "--data-dir={{.Dir}}" or
// "{{range .Nodes}}{{.Name}}=http://{{.Host}}:{{.Port.peer}},{{end}}".
// Their names are the templates' vocabulary; what a workload sees of a node
// (its GOFAULT_NODES entry) is WorkloadNode's.
type NodeVars struct {
	Index int            // 1-based
	Name  string         // "n1", "n2", ...
	Bin   string         // the node binary
	Dir   string         // the node's data dir (and working dir)
	Port  map[string]int // the node's ports by name
	Host  string         // "127.0.0.1"
	Trial string         // the trial ID
	// TrialDir is the trial's directory, holding node dirs and logs.
	TrialDir string
	// Nodes are all nodes of the cluster (their own Nodes are nil).
	Nodes []NodeVars
}

// WorkloadNode returns the node as a workload sees it: its entry of
// GOFAULT_NODES (wire.EnvNodes).
func (v NodeVars) WorkloadNode() wire.Node {
	return wire.Node{Name: v.Name, Host: v.Host, Ports: v.Port}
}

// NodeName returns the name of the node with 1-based index i: "n1", ...
func NodeName(i int) string { return fmt.Sprintf("n%d", i) }

// Render executes a template over v; a missing key (an undeclared port
// name) is an error.
func Render(text string, v NodeVars) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	t, err := template.New("").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("template %q: %w", text, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, v); err != nil {
		return "", fmt.Errorf("template %q: %w", text, err)
	}
	return b.String(), nil
}
