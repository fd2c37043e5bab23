package instrument

import (
	"go/types"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// raftLike is shaped like hashicorp/raft: a Raft struct told apart by its
// localID (a string type), methods that do file I/O, receivers of every
// form, and another type whose methods are no member's.
const raftLike = `package p

import "os"

type ServerID string

type config struct{ LocalID ServerID }

type Raft struct {
	config
	localID ServerID
	dir     string
	term    uint64
}

func (r *Raft) persist(b []byte) error {
	return os.WriteFile(r.dir+"/state", b, 0o644)
}

func (r Raft) ID() ServerID { return r.localID }

func (*Raft) name() string { return "raft" }

func (_ *Raft) ignored() {}

//go:nosplit
func (r *Raft) fast() uint64 { return r.term }

type store struct{ dir string }

func (s *store) Create() (*os.File, error) { return os.Create(s.dir + "/snap") }

func NewRaft(id ServerID, dir string) *Raft { return &Raft{localID: id, dir: dir} }
`

// TestMemberEdits: every method of the member type gets the member hook
// at its entry, undone when it returns (a nil check for pointer receivers, a name for an unnamed
// receiver), a "_" receiver is counted and left alone, so is a
// //go:nosplit method, other types'
// methods and plain functions get nothing; the file compiles and keeps
// its positions.
func TestMemberEdits(t *testing.T) {
	fset, f, info, pkg := typecheck(t, raftLike)
	mt, err := resolveMember(memberRule{pkg: "example.com/p", typ: "Raft", field: "localID"},
		map[string]*packages.Package{"example.com/p": {Types: pkg}})
	if err != nil {
		t.Fatal(err)
	}
	out := rewriteFile(fileInput{src: []byte(raftLike), file: f, fset: fset, info: info, pkg: pkg,
		lineName: "/src/p/p.go", member: mt}, nil)
	var hooks []string
	for _, e := range out.edits {
		text := e.prefix
		if i := strings.Index(text, "/*line"); i >= 0 {
			text = text[:i]
		}
		hooks = append(hooks, text)
	}
	want := []string{
		" if r != nil { defer gofaultagent.MemberExit(gofaultagent.MemberEnter(string(r.localID))) }; ",
		" defer gofaultagent.MemberExit(gofaultagent.MemberEnter(string(r.localID))); ",
		"gofaultRecv ",
		" if gofaultRecv != nil { defer gofaultagent.MemberExit(gofaultagent.MemberEnter(string(gofaultRecv.localID))) }; ",
	}
	if strings.Join(hooks, "\n") != strings.Join(want, "\n") {
		t.Errorf("hooks\n%s\nwant\n%s", strings.Join(hooks, "\n"), strings.Join(want, "\n"))
	}
	if out.blankMembers != 1 {
		t.Errorf("%d blank receivers counted, want 1 (ignored)", out.blankMembers)
	}
	checkStatesCompile(t, out.src)
	samePositions(t, raftLike, out.src)
}

// TestResolveMember: a member rule must name a loaded package, a struct
// type of it and a string-typed field (a promoted one too); each mistake
// is said.
func TestResolveMember(t *testing.T) {
	_, _, _, pkg := typecheck(t, raftLike)
	pkgs := map[string]*packages.Package{"example.com/p": {Types: pkg}}
	for _, tc := range []struct {
		rule, wantErr string
	}{
		{"example.com/p.Raft.localID", ""},
		{"example.com/p.Raft.LocalID", ""}, // promoted from config
		{"example.com/q.Raft.localID", "package example.com/q is not among the packages instrumented"},
		{"example.com/p.Node.localID", "declares no type Node"},
		{"example.com/p.ServerID.x", "ServerID is not a struct type"},
		{"example.com/p.Raft.id", "type Raft has no field id"},
		{"example.com/p.Raft.persist", "type Raft has no field persist"},
		{"example.com/p.Raft.term", "field term is a uint64, not a string type"},
		{"Raft.localID", "want pkg/path.Type.field"},
		{"example.com/p.Raft.local-ID", "want pkg/path.Type.field"},
	} {
		rule, err := parseMember(tc.rule)
		var mt *memberType
		if err == nil {
			mt, err = resolveMember(rule, pkgs)
		}
		switch {
		case tc.wantErr == "" && (err != nil || mt == nil || mt.obj != pkg.Scope().Lookup("Raft").(*types.TypeName)):
			t.Errorf("%s: %v, want the Raft type", tc.rule, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tc.rule, err, tc.wantErr)
		}
	}
}
