package instrument

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// pointsCatalog has one program point of each list in the module cache's
// p.go and one in the user's q.go, and a second site in p.go reached
// through an unclean name.
func pointsCatalog() *catalog.Catalog {
	const cached, user = "/cache/m@v1/p/p.go", "/src/q/q.go"
	return &catalog.Catalog{
		Sites:         []catalog.Site{{ID: "s1", File: cached}, {ID: "s2", File: user}, {ID: "s3", File: "/cache/m@v1/p/../p/p.go"}},
		TimeoutPoints: []catalog.TimeoutPoint{{ID: "t1", File: user}, {ID: "t2", File: cached}},
		States:        []catalog.State{{ID: "a1", File: cached}, {ID: "a2", File: user}},
		ObservePoints: []catalog.ObservePoint{{ID: "b1", File: user}, {ID: "b2", File: cached}},
		Role:          &catalog.Role{Writes: []catalog.RoleWrite{{ID: "r1", File: cached}, {ID: "r2", File: user}}},
	}
}

// files lists the file of every program point of c, list by list.
func files(c *catalog.Catalog) map[string][]string {
	m := map[string][]string{}
	add := func(list string, f string) { m[list] = append(m[list], f) }
	for _, s := range c.Sites {
		add("sites", s.File)
	}
	for _, p := range c.TimeoutPoints {
		add("timeouts", p.File)
	}
	for _, s := range c.States {
		add("states", s.File)
	}
	for _, p := range c.ObservePoints {
		add("observe", p.File)
	}
	for _, w := range roleWrites(c) {
		add("roles", w.File)
	}
	return m
}

// TestLocalize: every one of the five lists moves to the copies, the
// catalog given stays as it was.
func TestLocalize(t *testing.T) {
	w := &Work{Copies: []ModuleCopy{{Orig: "/cache/m@v1", Dir: "/work/mod/m@v1"}}}
	cat := pointsCatalog()
	got := localize(cat, w)
	const copied, user = "/work/mod/m@v1/p/p.go", "/src/q/q.go"
	want := map[string][]string{
		"sites":    {copied, user, copied},
		"timeouts": {user, copied},
		"states":   {copied, user},
		"observe":  {user, copied},
		"roles":    {copied, user},
	}
	if f := files(got); !reflect.DeepEqual(f, want) {
		t.Errorf("localized files\n%v, want\n%v", f, want)
	}
	if f := files(cat); !reflect.DeepEqual(f, files(pointsCatalog())) {
		t.Errorf("localize changed its argument: %v", f)
	}
}

// TestLoadedOnly: each list is grouped by clean file name in list order,
// and the points of a file that was not loaded are skipped with the list's
// own reason, whatever list they are in.
func TestLoadedOnly(t *testing.T) {
	cat := pointsCatalog()
	loaded := map[string]fileRef{"/cache/m@v1/p/p.go": {}}
	skipped, touched := map[string]string{}, map[string]bool{}
	got := map[string][]string{} // "list file" -> IDs
	collect := func(list string, groups map[string][]string) {
		for f, g := range groups {
			got[list+" "+f] = g
		}
	}
	collect("sites", groupIDs(loadedOnly(cat.Sites, siteAt, loaded, SkipNotFound, skipped, touched), siteAt))
	collect("timeouts", groupIDs(loadedOnly(cat.TimeoutPoints, timeoutAt, loaded, SkipTimeoutNotFound, skipped, touched), timeoutAt))
	collect("states", groupIDs(loadedOnly(cat.States, stateAt, loaded, SkipStateNotFound, skipped, touched), stateAt))
	collect("roles", groupIDs(loadedOnly(roleWrites(cat), roleWriteAt, loaded, SkipRoleNotFound, skipped, touched), roleWriteAt))
	collect("observe", groupIDs(loadedOnly(cat.ObservePoints, observeAt, loaded, SkipObserveNotFound, skipped, touched), observeAt))
	const p = "/cache/m@v1/p/p.go"
	want := map[string][]string{
		"sites " + p: {"s1", "s3"}, "timeouts " + p: {"t2"}, "states " + p: {"a1"}, "roles " + p: {"r1"}, "observe " + p: {"b2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups %v, want %v", got, want)
	}
	wantSkipped := map[string]string{"s2": SkipNotFound, "t1": SkipTimeoutNotFound, "a2": SkipStateNotFound, "r2": SkipRoleNotFound, "b1": SkipObserveNotFound}
	if !reflect.DeepEqual(skipped, wantSkipped) {
		t.Errorf("skipped %v, want %v", skipped, wantSkipped)
	}
	if f := slices.Sorted(maps.Keys(touched)); !reflect.DeepEqual(f, []string{p}) {
		t.Errorf("touched %v, want only %s", f, p)
	}
}

// groupIDs maps each group of loadedOnly to its IDs, in order.
func groupIDs[T any](groups map[string][]*T, at func(*T) place) map[string][]string {
	m := map[string][]string{}
	for f, g := range groups {
		for _, it := range g {
			m[f] = append(m[f], at(it).id)
		}
	}
	return m
}

func TestAddPackages(t *testing.T) {
	seen := map[string]bool{"a": true}
	paths := addPackages(nil, seen, []catalog.State{{Pkg: ""}, {Pkg: "a"}, {Pkg: "b"}, {Pkg: "b"}}, stateAt)
	paths = addPackages(paths, seen, []catalog.Site{{Pkg: "c"}, {Pkg: "b"}}, siteAt)
	if want := []string{"b", "c"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
}

// TestDropped: a dropped point of any of the five lists is listed with its
// position and reason — role writes and observation points too, which
// dropped.json left out before the lists shared one helper.
func TestDropped(t *testing.T) {
	cat := pointsCatalog()
	cat.Sites[0].Line, cat.Role.Writes[1].Line = 7, 9
	skipped := map[string]string{"s1": SkipCompile, "t1": SkipTimeoutNotFound, "a2": SkipStateNotFound, "r2": SkipRoleValue, "b1": SkipObserveNotFound}
	got := dropped(cat, skipped, map[string][]string{"s1": {"p.go:7: undefined: x"}})
	want := []Dropped{
		{ID: "a2", What: "state", File: "/src/q/q.go", Reason: SkipStateNotFound},
		{ID: "b1", What: "observation point", File: "/src/q/q.go", Reason: SkipObserveNotFound},
		{ID: "r2", What: "role write", File: "/src/q/q.go", Line: 9, Reason: SkipRoleValue},
		{ID: "s1", What: "site", File: "/cache/m@v1/p/p.go", Line: 7, Reason: SkipCompile, Errors: []string{"p.go:7: undefined: x"}},
		{ID: "t1", What: "timeout point", File: "/src/q/q.go", Reason: SkipTimeoutNotFound},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dropped\n%+v, want\n%+v", got, want)
	}
}
