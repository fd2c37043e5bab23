package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/semver"
)

// Release is a part of gofault.yaml that applies only to some releases of
// the target, chosen by target.version: a target whose packages moved, whose
// consensus library became a module of its own or whose flags were renamed
// between its release lines (etcd v3.5 and v3.6) keeps one profile, with
// the other line's differences in a release entry. The first entry whose
// Versions match target.version is laid over the file before it is
// decoded: its mappings merge field by field, and a list or a value it gives
// replaces the file's. --set overrides are applied again after it, so they
// win over the entry.
type Release struct {
	// Versions are the releases the entry applies to: a line ("v3.5",
	// every v3.5.x; "v3", every v3.x.y) or one release ("v3.5.2").
	Versions []string `yaml:"versions"`
	// Target replaces or adds target fields for these releases (all but
	// target.version, which chooses the entry).
	Target Target `yaml:"target"`
	// Cluster replaces or adds cluster fields, e.g. a command whose flags
	// the line names otherwise.
	Cluster Cluster `yaml:"cluster"`
	// Workload replaces or adds workload fields.
	Workload Workload `yaml:"workload"`
	// Checkers replaces or adds checker fields, e.g. log_ignore patterns of
	// lines only that release prints.
	Checkers Checkers `yaml:"checkers"`
	// Faults replaces or adds fault fields, e.g. powerloss_paths of a line
	// that keeps its data elsewhere.
	Faults Faults `yaml:"faults"`
}

// MatchesVersion reports whether a Versions entry v names version: the
// same release, or a line of it ("v3.5" names v3.5.2 and v3.5.0-rc.1, not
// v3.50.1).
func MatchesVersion(v, version string) bool {
	if v == version {
		return true
	}
	if semver.Prerelease(v) != "" || semver.Build(v) != "" || strings.Count(v, ".") == 2 {
		return false // a whole release matches only itself
	}
	return strings.HasPrefix(version, v+".")
}

// applyRelease lays the first release entry of root that matches root's
// target.version over root, and returns the entry's Versions joined by
// ", " ("" when none matched or no version is set). root is not checked
// yet: a shape the schema refuses is left for the check to report.
func applyRelease(root *yaml.Node) (string, error) {
	version := ""
	if t := mapValue(root, "target"); t != nil {
		if v := mapValue(t, "version"); v != nil && v.Kind == yaml.ScalarNode {
			version = v.Value
		}
	}
	rels := mapValue(root, "releases")
	if version == "" || rels == nil || rels.Kind != yaml.SequenceNode {
		return "", nil
	}
	for i, rel := range rels.Content {
		vs := mapValue(rel, "versions")
		if vs == nil || vs.Kind != yaml.SequenceNode || len(vs.Content) == 0 {
			return "", fmt.Errorf("line %d: releases[%d] names no versions: give the lines or releases it applies to, e.g. \"versions: [v3.5]\"", rel.Line, i)
		}
		var names []string
		match := false
		for _, v := range vs.Content {
			if !semver.IsValid(v.Value) {
				return "", fmt.Errorf("line %d: releases[%d].versions: %q is not a version: want a line such as \"v3.5\" or a release such as \"v3.5.2\"", v.Line, i, v.Value)
			}
			names = append(names, v.Value)
			match = match || MatchesVersion(v.Value, version)
		}
		if t := mapValue(rel, "target"); t != nil && mapValue(t, "version") != nil {
			return "", fmt.Errorf("line %d: releases[%d].target.version: an entry cannot set the version that chooses it; set target.version at the top", t.Line, i)
		}
		if !match {
			continue
		}
		for j := 0; j+1 < len(rel.Content); j += 2 {
			if k := rel.Content[j].Value; k != "versions" {
				mergeNode(root, k, rel.Content[j+1])
			}
		}
		return strings.Join(names, ", "), nil
	}
	return "", nil
}

// mapValue returns the value of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// mergeNode sets key of mapping dst to v: mappings merge key by key,
// anything else replaces what dst held.
func mergeNode(dst *yaml.Node, key string, v *yaml.Node) {
	old := mapValue(dst, key)
	switch {
	case old == nil:
		dst.Content = append(dst.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	case old.Kind == yaml.MappingNode && v.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(v.Content); i += 2 {
			mergeNode(old, v.Content[i].Value, v.Content[i+1])
		}
	default:
		*old = *v
	}
}
