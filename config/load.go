package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Load reads a gofault.yaml file, applies the "path=value" overrides (as
// given to --set) to its YAML tree, and decodes the result, rejecting unknown
// fields with an error naming the field, its line and the closest valid
// field. It sets Dir to the file's directory. Load neither fills defaults nor
// validates; Open does all three.
func Load(path string, overrides ...string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := Parse(data, overrides...)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c.Dir = filepath.Dir(abs)
	return c, nil
}

// Open loads the config at path with the overrides, fills defaults and
// validates it against the known names. It is what commands use.
func Open(path string, known Known, overrides ...string) (*Config, error) {
	c, err := Load(path, overrides...)
	if err != nil {
		return nil, err
	}
	c.Defaults()
	if err := c.Validate(known); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Parse decodes YAML config data after applying the overrides and the
// releases entry that the resulting target.version chooses (Release). Dir
// is left empty.
func Parse(data []byte, overrides ...string) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse yaml: %w", err)
	}
	if doc.Kind == 0 { // empty file
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	if root := doc.Content[0]; root.Kind != yaml.MappingNode && !isNull(root) {
		return nil, fmt.Errorf("line %d: want a mapping of fields such as \"name: etcd\", got %q", root.Line, nodeText(root))
	}
	for _, o := range overrides {
		if err := Set(&doc, o); err != nil {
			return nil, err
		}
	}
	// The release entry that target.version chooses, then the overrides
	// again: --set wins over the entry. The merged tree, the releases
	// entries included, is checked with its lines as it is decoded.
	release, err := applyRelease(doc.Content[0])
	if err != nil {
		return nil, err
	}
	if release != "" {
		for _, o := range overrides {
			if err := Set(&doc, o); err != nil {
				return nil, err
			}
		}
	}
	var c Config
	if err := configStrict.Decode(doc.Content[0], &c); err != nil {
		return nil, err
	}
	c.Release = release
	return &c, nil
}

// Path resolves p against the config file's directory.
func (c *Config) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.Dir, p)
}

// Overrides collects repeated --set path=value flags; use it with
// flag.FlagSet.Var and pass it to Load or Open as overrides...
type Overrides []string

// String returns the overrides joined by spaces.
func (o *Overrides) String() string { return strings.Join(*o, " ") }

// Set adds one override; it checks only the path=value shape, Load checks
// the path and value.
func (o *Overrides) Set(s string) error {
	if p, _, ok := strings.Cut(s, "="); !ok || strings.TrimSpace(p) == "" {
		return fmt.Errorf("want path=value, e.g. cluster.nodes=5")
	}
	*o = append(*o, s)
	return nil
}
