package cluster

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
)

// NodeVars are the variables of one node that the command, env and ready
// templates of config.Cluster see, e.g. "--data-dir={{.Dir}}" or
// "{{range .Nodes}}{{.Name}}=http://{{.Host}}:{{.Port.peer}},{{end}}".
type NodeVars struct {
	Index int            `json:"index"` // 1-based
	Name  string         `json:"name"`  // "n1", "n2", ...
	Bin   string         `json:"bin"`   // the node binary
	Dir   string         `json:"dir"`   // the node's data dir (and working dir)
	Port  map[string]int `json:"ports"` // the node's ports by name
	Host  string         `json:"host"`  // "127.0.0.1"
	Trial string         `json:"trial"` // the trial ID
	// TrialDir is the trial's directory, holding node dirs and logs.
	TrialDir string `json:"trial_dir"`
	// Nodes are all nodes of the cluster (their own Nodes are nil).
	Nodes []NodeVars `json:"-"`
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

// NodesJSON encodes the nodes for a workload's GOFAULT_NODES variable:
// [{"name":"n1","host":"127.0.0.1","ports":{"client":2379},...},...].
func NodesJSON(nodes []NodeVars) string {
	b, err := json.Marshal(nodes)
	if err != nil {
		panic("cluster: encode nodes: " + err.Error()) // plain data always encodes
	}
	return string(b)
}
