package config

import (
	"cmp"
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// Strict decodes a YAML file into a Go value strictly: the one decoding
// path of gofault's YAML files (gofault.yaml, a known-bug file). Decode
// checks every field name and value against the Go type first and names
// the first problem with its line and path ("bugs[0].affected"): an
// unknown field (Unknown's error), a field given twice, or a value of the
// wrong shape or under its field's `min` tag: "want" what the field's
// `want` tag says, then the value in parentheses, else its type's
// description, a comma, and the value. A struct type that implements
// yaml.Unmarshaler may also be written as one scalar, which its
// UnmarshalYAML reads.
type Strict struct {
	// Root names the top level of the file in errors ("config").
	Root string
	// Unknown is the error for the unknown field key of the mapping at
	// path parent ("" for the top level), at line (0 for a --set value);
	// valid are the fields there, in declaration order.
	Unknown func(parent, key string, line int, valid []string) error
}

// configStrict decodes gofault.yaml.
var configStrict = Strict{
	Root: "config",
	Unknown: func(parent, key string, line int, _ []string) error {
		return unknownFieldError(join(parent, key), line)
	},
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// Decode checks YAML node n against the type of out, a pointer, and
// decodes n into out.
func (s Strict) Decode(n *yaml.Node, out any) error {
	if err := s.check(n, reflect.TypeOf(out).Elem(), "", field{}); err != nil {
		return err
	}
	// check has vetted every field name and value, with lines.
	if err := n.Decode(out); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}

// check checks YAML node n against type t at path, the value of field f
// (its want and min; zero for a list's item, a map's value or the top
// level).
func (s Strict) check(n *yaml.Node, t reflect.Type, path string, f field) error {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	optional := t.Kind() == reflect.Pointer
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	wrong := func() error {
		at := ""
		if n.Line > 0 { // not a --set value
			at = fmt.Sprintf("line %d: ", n.Line)
		}
		if f.want != "" {
			return fmt.Errorf("%s%s: want %s (got %q)", at, cmp.Or(path, s.Root), f.want, nodeText(n))
		}
		return fmt.Errorf("%s%s: want %s, got %q", at, cmp.Or(path, s.Root), describe(t), nodeText(n))
	}
	switch {
	case isNull(n) && optional && t.Kind() == reflect.Struct:
		// A section that is there only when given (a pointer) is given
		// with a value: "test:" alone is a mistake, not no test section.
		// An optional value (a *bool such as workload.adaptive_end) may be
		// null: unset, its default (a bundle's gofault.yaml writes it so).
		return wrong()
	case isNull(n):
		return nil
	case isLeaf(t):
		v := reflect.New(t)
		if n.Kind != yaml.ScalarNode || n.Decode(v.Interface()) != nil {
			return wrong()
		}
		if f.min != nil && v.Elem().CanInt() && v.Elem().Int() < *f.min {
			return wrong()
		}
	case t.Kind() == reflect.Struct && n.Kind == yaml.ScalarNode && reflect.PointerTo(t).Implements(unmarshalerType):
		if n.Decode(reflect.New(t).Interface()) != nil {
			return wrong()
		}
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return wrong()
		}
		return s.checkFields(n, t, path)
	case t.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			return wrong()
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := s.check(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), field{}); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return wrong()
		}
		for i, e := range n.Content {
			if err := s.check(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), field{}); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFields checks the fields of mapping n against struct type t at
// path: each known, given once, and of its field's type.
func (s Strict) checkFields(n *yaml.Node, t reflect.Type, path string) error {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" { // merge key
			if err := s.check(v, t, path, field{}); err != nil {
				return err
			}
			continue
		}
		f, ok := lookupField(t, k.Value)
		if !ok {
			var valid []string
			for _, f := range fieldsOf(t) {
				valid = append(valid, f.name)
			}
			return s.Unknown(path, k.Value, k.Line, valid)
		}
		if seen[k.Value] {
			return fmt.Errorf("line %d: %s: field %q given twice; remove one", k.Line, cmp.Or(path, s.Root), k.Value)
		}
		seen[k.Value] = true
		if err := s.check(v, f.typ, join(path, k.Value), f); err != nil {
			return err
		}
	}
	return nil
}
