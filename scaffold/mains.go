package scaffold

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Main is one main package of the module as a candidate node program: its
// path relative to the module ("./cmd/kv") and the evidence that ranked it.
type Main struct {
	Path string
	// Why is the evidence, strongest first ("under tools/", "named after
	// the module", "built by Makefile"); empty when there is none.
	Why []string
}

// Reason is m's evidence as one phrase.
func (m Main) Reason() string {
	if len(m.Why) == 0 {
		return "no evidence: another main package"
	}
	return strings.Join(m.Why, ", ")
}

// demotedDirs are the directories whose main packages are tools, tests or
// leftovers, never the node program unless nothing else is there.
var demotedDirs = []string{
	"test", "tests", "testing", "testdata", "e2e", "integration", "tool", "tools", "unmaintained", "deprecated",
	"example", "examples", "_examples", "hack", "scripts", "contrib", "bench", "benchmark", "benchmarks", "internal/tools",
}

// toolWords in a main's path mark a client or tool (kvctl, bench, gen).
var toolWords = []string{"ctl", "cli", "client", "tool", "bench", "example", "workload", "gen", "test"}

// rankMains orders the module's main packages (relative paths, "./cmd/kv")
// most likely node program first, by evidence: a main named after the
// module or its repository (its last path element, without a major
// version suffix); one that build files build (built: main path → where,
// from buildEvidence); then the others, a name that says server, node or
// daemon (or ends in d, as etcd and kvd) before the rest and clients and
// tools last. Mains under a demoted directory (test, tools, unmaintained,
// examples, hack, scripts...) come after all others whatever their name.
func rankMains(modPath string, mains []string, built map[string]string) []Main {
	repo := repoName(modPath)
	type ranked struct {
		Main
		key [4]int
	}
	var rs []ranked
	for _, p := range mains {
		r := ranked{Main: Main{Path: p}}
		if d := demotedDir(p); d != "" {
			r.key[0] = 1
			r.Why = append(r.Why, "under "+d+"/")
		}
		base := path.Base(p)
		if p == "." {
			base = repo
		}
		if repo != "" && base == repo {
			r.Why = append(r.Why, "named after the module")
		} else {
			r.key[1] = 1
		}
		if where, ok := built[p]; ok {
			r.Why = append(r.Why, "built by "+where)
		} else {
			r.key[2] = 1
		}
		switch nameKind(p) {
		case "server":
			r.Why = append(r.Why, "its name says server")
		case "tool":
			r.key[3] = 2
			r.Why = append(r.Why, "its name says client or tool")
		default:
			r.key[3] = 1
		}
		rs = append(rs, r)
	}
	slices.SortStableFunc(rs, func(a, b ranked) int { return slices.Compare(a.key[:], b.key[:]) })
	out := make([]Main, len(rs))
	for i, r := range rs {
		out[i] = r.Main
	}
	return out
}

// repoName is the last element of a module path without its major version
// suffix: "etcd" for go.etcd.io/etcd/v3.
func repoName(modPath string) string {
	base := path.Base(modPath)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" && path.Dir(modPath) != "." {
		base = path.Base(path.Dir(modPath))
	}
	return base
}

// demotedDir is the demoted directory p lies under ("" when none).
func demotedDir(p string) string {
	dir := "/" + strings.TrimPrefix(path.Clean(p), "./") + "/"
	for _, d := range demotedDirs {
		if strings.Contains(dir, "/"+d+"/") {
			return d
		}
	}
	return ""
}

// nameKind says what a main's name suggests: "server" (server, node or
// daemon in its last element, or a d at its end), "tool" (a client, a tool,
// a benchmark or a generator anywhere in its path) or "".
func nameKind(p string) string {
	for _, w := range toolWords {
		if strings.Contains(p, w) {
			return "tool"
		}
	}
	base := path.Base(p)
	for _, w := range []string{"server", "node", "daemon"} {
		if strings.Contains(base, w) {
			return "server"
		}
	}
	if len(base) > 2 && strings.HasSuffix(base, "d") {
		return "server"
	}
	return ""
}

// buildFiles are the files at the module's root whose lines say which
// program is built and shipped.
var buildFiles = []string{"Makefile", "makefile", "GNUmakefile", "Dockerfile", "Containerfile", "README.md", "README", "README.rst", "goreleaser.yml", ".goreleaser.yml", ".goreleaser.yaml"}

// buildEvidence reads the module's build files and says, for each main
// that one of them builds or ships, which: "Makefile".
func buildEvidence(dir, modPath string, mains []string) map[string]string {
	out := map[string]string{}
	names := slices.Clone(buildFiles)
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			n := e.Name()
			if !e.IsDir() && (strings.HasPrefix(n, "Dockerfile.") || strings.HasSuffix(n, ".Dockerfile") || strings.HasSuffix(n, ".mk")) {
				names = append(names, n)
			}
		}
	}
	for _, name := range names {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			for _, m := range builtBy(line, modPath, mains) {
				if _, ok := out[m]; !ok {
					out[m] = name
				}
			}
		}
		f.Close()
	}
	return out
}

// builtBy is the mains a build-file line builds or ships: a "go build" or
// "go install" naming the main's directory or import path, or a
// Dockerfile's COPY --from, ENTRYPOINT or CMD naming a binary after it.
func builtBy(line, modPath string, mains []string) []string {
	var out []string
	switch {
	case strings.Contains(line, "go build") || strings.Contains(line, "go install"):
		for _, tok := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(" \t\"'`=;()", r) }) {
			tok, _, _ = strings.Cut(tok, "@")
			if strings.HasSuffix(tok, "...") {
				continue // a pattern builds everything: no evidence
			}
			tok = strings.TrimSuffix(tok, "/")
			for _, m := range mains {
				rel := strings.TrimPrefix(m, "./")
				if tok == m || tok == rel || tok == path.Join(modPath, rel) || (rel != "." && strings.HasSuffix(tok, "/"+rel)) ||
					(m == "." && tok == modPath) {
					out = append(out, m)
				}
			}
		}
	case hasPrefixFold(line, "COPY --from") || hasPrefixFold(line, "ENTRYPOINT") || hasPrefixFold(line, "CMD"):
		for _, tok := range strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(" \t\"'[],", r) })[1:] {
			if strings.HasPrefix(tok, "--") {
				continue
			}
			bin := path.Base(tok)
			for _, m := range mains {
				if m != "." && path.Base(m) == bin {
					out = append(out, m)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
