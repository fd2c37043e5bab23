package config

import (
	"embed"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
)

// SchemaURL is where the JSON Schema of gofault.yaml is published (the
// committed docs/gofault.schema.json); "gofault init" names it on the
// template's first line for editors (yaml-language-server).
const SchemaURL = "https://raw.githubusercontent.com/gofault/gofault/main/docs/gofault.schema.json"

// configSources are the files declaring the config types: their doc
// comments are the schema's descriptions.
//
//go:embed config.go bound.go parallel.go release.go
var configSources embed.FS

// JSONSchema returns the JSON Schema (draft-07) of gofault.yaml, generated
// by reflection over Config (the yaml tags name the properties) with the
// doc comments of its types and fields as descriptions. Names that k lists
// (policies, checkers, fault kinds; FaultKinds when k has none) and the
// fixed choices of shutdown.order, policy.key and policy.memory are enums. Unknown fields
// are refused, as Load refuses them.
func JSONSchema(k Known) ([]byte, error) {
	docs, err := typeDocs()
	if err != nil {
		return nil, err
	}
	kinds := k.FaultKinds
	if len(kinds) == 0 {
		kinds = FaultKinds
	}
	g := schemaGen{docs: docs, enums: map[string][]string{
		"policy.name":             k.Policies,
		"policy.key":              {"state", "state+site", "state+site+stack"},
		"policy.memory":           {MemoryOn, MemoryOff},
		"checkers.enabled[]":      k.Checkers,
		"faults.kinds[]":          kinds,
		"faults.files[]":          FileRoles,
		"cluster.shutdown.order":  {ShutdownParallel, ShutdownSequential, ShutdownLeaderLast},
		"cluster.shutdown.signal": {"SIGTERM", "SIGINT", "SIGQUIT", "SIGHUP", "SIGKILL", "SIGUSR1", "SIGUSR2"},
	}}
	root := g.schema(reflect.TypeFor[Config](), "")
	root["$schema"] = "http://json-schema.org/draft-07/schema#"
	root["$id"] = SchemaURL
	root["title"] = "gofault.yaml"
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("config schema: %w", err)
	}
	return append(out, '\n'), nil
}

// durationPattern matches one number and unit of what time.ParseDuration
// accepts (without a sign); durationRegexp a whole duration, boundRegexp
// a Bound.
const (
	durationPattern = `([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h)`
	durationRegexp  = "^(0|(" + durationPattern + ")+)$"
	boundRegexp     = "^(auto|0|(" + durationPattern + ")+)$"
)

// schemaGen builds the schema of one type at a time.
type schemaGen struct {
	docs  map[string]typeDoc
	enums map[string][]string // by config path; "[]" marks a list's items
}

// schema returns the schema of values of type t found at path.
func (g schemaGen) schema(t reflect.Type, path string) map[string]any {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := map[string]any{}
	switch {
	case t == durationType:
		s["type"] = "string"
		s["pattern"] = durationRegexp
	case t == boundType:
		s["type"] = "string"
		s["pattern"] = boundRegexp
	case t == parallelType:
		s["type"] = []any{"integer", "string"} // a number of at least 1, or "auto"
		s["minimum"] = 1
		s["pattern"] = "^" + Auto + "$"
	case t.Kind() == reflect.String:
		s["type"] = "string"
	case t.Kind() == reflect.Bool:
		s["type"] = "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		s["type"] = "integer"
	case t.Kind() == reflect.Slice:
		s["type"] = "array"
		s["items"] = g.schema(t.Elem(), path+"[]")
	case t.Kind() == reflect.Map:
		s["type"] = "object"
		s["additionalProperties"] = g.schema(t.Elem(), path+".*")
	case t.Kind() == reflect.Struct:
		s["type"] = "object"
		s["additionalProperties"] = false
		d := g.docs[t.Name()]
		if d.doc != "" {
			s["description"] = d.doc
		}
		props := map[string]any{}
		for _, f := range fieldsOf(t) {
			p := g.schema(f.typ, join(path, f.name))
			if fd := d.fields[f.goName]; fd != "" {
				// "Nodes is the number ..." reads "nodes is the number ..."
				// where the YAML name is what the user writes.
				if rest, ok := strings.CutPrefix(fd, f.goName+" "); ok {
					fd = f.name + " " + rest
				}
				if td, ok := p["description"]; ok {
					fd += "\n\n" + td.(string)
				}
				p["description"] = fd
			}
			props[f.name] = p
		}
		s["properties"] = props
	}
	if e := g.enums[path]; len(e) > 0 {
		s["enum"] = e
	}
	return s
}

// typeDoc is the doc comment of a config type and of each of its fields
// (by Go name).
type typeDoc struct {
	doc    string
	fields map[string]string
}

// typeDocs reads the doc comments of the config types from their source.
func typeDocs() (map[string]typeDoc, error) {
	out := map[string]typeDoc{}
	fset := token.NewFileSet()
	for _, name := range []string{"config.go", "bound.go"} {
		src, err := configSources.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("config schema: %w", err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("config schema: %w", err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, sp := range gd.Specs {
				ts := sp.(*ast.TypeSpec)
				td := typeDoc{doc: text(ts.Doc, gd.Doc), fields: map[string]string{}}
				if st, ok := ts.Type.(*ast.StructType); ok {
					for _, fl := range st.Fields.List {
						for _, n := range fl.Names {
							td.fields[n.Name] = text(fl.Doc, fl.Comment)
						}
					}
				}
				out[ts.Name.Name] = td
			}
		}
	}
	return out, nil
}

// text returns the first non-empty comment group's text as one paragraph
// per blank-line-separated block, lines joined.
func text(groups ...*ast.CommentGroup) string {
	for _, g := range groups {
		if t := strings.TrimSpace(g.Text()); t != "" {
			var paras []string
			for _, p := range strings.Split(t, "\n\n") {
				paras = append(paras, strings.Join(strings.Fields(p), " "))
			}
			return strings.Join(paras, "\n\n")
		}
	}
	return ""
}
