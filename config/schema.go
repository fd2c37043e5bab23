package config

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

var (
	durationType = reflect.TypeFor[time.Duration]()
	boundType    = reflect.TypeFor[Bound]()
	parallelType = reflect.TypeFor[Parallel]()
)

// field is one YAML field of a struct.
type field struct {
	name   string
	typ    reflect.Type
	goName string // the struct field's Go name
	// want, from the struct field's `want` tag, says what the field's
	// value looks like where its type's description (describe) would not
	// say enough; min, from its `min` tag, is the least whole number (or
	// duration in nanoseconds) it takes, if set.
	want string
	min  *int64
}

// fieldsOf lists the YAML fields of struct type t in declaration order.
func fieldsOf(t reflect.Type) []field {
	var fs []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fd := field{name: name, typ: f.Type, goName: f.Name, want: f.Tag.Get("want")}
		if m, err := strconv.ParseInt(f.Tag.Get("min"), 10, 64); err == nil {
			fd.min = &m
		}
		fs = append(fs, fd)
	}
	return fs
}

func lookupField(t reflect.Type, name string) (field, bool) {
	for _, f := range fieldsOf(t) {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

// isLeaf reports whether values of t are written as one YAML scalar.
func isLeaf(t reflect.Type) bool {
	return t == durationType || (t.Kind() != reflect.Struct && t.Kind() != reflect.Map && t.Kind() != reflect.Slice)
}

// Fields lists every settable path of the config schema ("cluster.nodes",
// "cluster.ready.timeout", ...), in declaration order. Map fields such as
// "cluster.env" accept any key below them.
func Fields() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for _, f := range fieldsOf(t) {
			p := prefix + f.name
			out = append(out, p)
			if f.typ.Kind() == reflect.Struct && f.typ != durationType {
				walk(f.typ, p+".")
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return out
}

// closest returns the valid config path nearest to the unknown path p.
func closest(p string) string { return Closest(p, Fields()) }

// Closest returns the string of valid nearest to s by edit distance, for a
// "did you mean" hint; "" when valid is empty. For dotted paths
// ("faults.kind"), paths of s's own section ("faults.") are preferred
// when there are any, and a match on the last element alone ranks just
// behind a full match.
func Closest(s string, valid []string) string {
	if i := strings.Index(s, "."); i > 0 {
		var same []string
		for _, v := range valid {
			if strings.HasPrefix(v, s[:i+1]) {
				same = append(same, v)
			}
		}
		if len(same) > 0 {
			valid = same
		}
	}
	best, bestScore := "", 1<<30
	last := s[strings.LastIndex(s, ".")+1:]
	for _, c := range valid {
		score := levenshtein(s, c)
		cl := c[strings.LastIndex(c, ".")+1:]
		if d := levenshtein(last, cl); d < score {
			score = d + 1 // a match on the last element alone ranks just behind a full match
		}
		if score < bestScore {
			best, bestScore = c, score
		}
	}
	return best
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func unknownFieldError(path string, line int) error {
	at := ""
	if line > 0 {
		at = fmt.Sprintf("line %d: ", line)
	}
	return fmt.Errorf("%sunknown field %q; did you mean %q? (run \"gofault init\" for a commented example, or see docs/config.md)", at, path, closest(path))
}

// describe says in words what a YAML value of type t looks like.
func describe(t reflect.Type) string {
	switch {
	case t == durationType:
		return `a duration such as "30s" or "1m30s"`
	case t == boundType:
		return `a duration such as "3s", or "auto"`
	case t == parallelType:
		return `a number such as 2, or "auto"`
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "an integer"
	case t.Kind() == reflect.Slice:
		return "a list such as [a, b] (items: " + describe(t.Elem()) + ")"
	case t.Kind() == reflect.Map:
		return "a mapping such as {KEY: value}"
	case t.Kind() == reflect.Pointer:
		return describe(t.Elem())
	case t.Kind() == reflect.Struct:
		var names []string
		for _, f := range fieldsOf(t) {
			names = append(names, f.name)
		}
		return "a mapping of fields (" + strings.Join(names, ", ") + ")"
	}
	return t.String()
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func nodeText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	out, err := yaml.Marshal(n)
	if err != nil {
		return "?"
	}
	s := strings.TrimSpace(string(out))
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// Set applies one override "path=value" (the argument of --set) to a YAML
// document tree before it is decoded, so the value is typed by the schema:
// "cluster.nodes=5", "trials.timeout=30s", "faults.kinds=error,delay" or
// "faults.kinds=[error, delay]", "cluster.env.GODEBUG=x=1". An unknown path
// is an error naming the closest valid field.
func Set(doc *yaml.Node, override string) error {
	path, value, ok := strings.Cut(override, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" {
		return fmt.Errorf("--set %q: want path=value, e.g. cluster.nodes=5", override)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return fmt.Errorf("--set %s: not a YAML document", path)
	}
	segs := strings.Split(path, ".")
	t := reflect.TypeFor[Config]()
	for i, s := range segs {
		p := strings.Join(segs[:i+1], ".")
		switch {
		case s == "":
			return fmt.Errorf("--set %s: empty path element", path)
		case t.Kind() == reflect.Struct && !isLeaf(t):
			f, ok := lookupField(t, s)
			if !ok {
				return fmt.Errorf("--set: %w", unknownFieldError(p, 0))
			}
			t = f.typ
		case t.Kind() == reflect.Map:
			t = t.Elem()
		default:
			return fmt.Errorf("--set %s: %s is %s and has no field %q", path, strings.Join(segs[:i], "."), describe(t), s)
		}
	}
	v, err := valueNode(t, value)
	if err != nil {
		return fmt.Errorf("--set %s: %w", path, err)
	}
	clearLines(v)
	if err := configStrict.check(v, t, path, field{}); err != nil {
		return fmt.Errorf("--set %s=%s: %w", path, value, err)
	}
	n := doc.Content[0]
	for i, s := range segs {
		if isNull(n) {
			*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("--set %s: %s in the file is not a mapping (line %d)", path, strings.Join(segs[:i], "."), n.Line)
		}
		next := mapValue(n, s)
		if next == nil {
			next = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}, next)
		}
		n = next
	}
	*n = *v
	return nil
}

// clearLines zeroes the positions of an override's nodes: they refer to
// the --set argument, not to the file.
func clearLines(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		clearLines(c)
	}
}

// valueNode builds the YAML node for an override value of type t.
func valueNode(t reflect.Type, value string) (*yaml.Node, error) {
	trimmed := strings.TrimSpace(value)
	switch {
	case isLeaf(t):
		n := &yaml.Node{Kind: yaml.ScalarNode, Value: value}
		if t.Kind() == reflect.String {
			n.Tag = "!!str"
		} else {
			n.Value = trimmed
		}
		return n, nil
	case t.Kind() == reflect.Slice && !strings.HasPrefix(trimmed, "["):
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		if trimmed == "" {
			return n, nil
		}
		for _, item := range strings.Split(value, ",") {
			e, err := valueNode(t.Elem(), strings.TrimSpace(item))
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, e)
		}
		return n, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
		return nil, fmt.Errorf("parse %q as YAML: %w", value, err)
	}
	if doc.Kind == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}, nil
	}
	return doc.Content[0], nil
}

// names formats a list of valid names for an error message.
func names(list []string) string {
	s := slices.Clone(list)
	sort.Strings(s)
	q := make([]string, len(s))
	for i, n := range s {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
