package fleet

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

func TestPackDirRoundTrip(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "n1.log"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(src, "node"), []byte("#!/bin/sh\n"), 0o755)
	os.MkdirAll(filepath.Join(src, "n1", "wal"), 0o755) // data dirs do not travel
	os.WriteFile(filepath.Join(src, "n1", "wal", "0.wal"), []byte("x"), 0o644)
	data, err := packDir(src)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "d")
	if err := unpackDir(data, dest); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"n1.log": "hello\n", "node": "#!/bin/sh\n"} {
		got, err := os.ReadFile(filepath.Join(dest, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dest, "node")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("node lost its mode: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dest, "n1")); !os.IsNotExist(err) {
		t.Errorf("a data dir travelled: %v", err)
	}
}

// TestPackTreeRoundTrip: a test bundle's tree travels whole (from a
// bundle dir given as a symbolic link too), and a tree's archive is
// refused where a flat one is expected.
func TestPackTreeRoundTrip(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "pkg.test"), []byte("bin"), 0o755)
	os.MkdirAll(filepath.Join(src, "pkg", "testdata", "in"), 0o755)
	os.WriteFile(filepath.Join(src, "pkg", "testdata", "in", "x.json"), []byte("{}"), 0o644)
	link := filepath.Join(t.TempDir(), "bundle") // a bundle given as a link
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	data, err := packBundle(link, true)
	if err != nil {
		t.Fatal(err)
	}
	// The same bundle written again (new file times) packs to the same
	// bytes: a resumed campaign's bundle keeps its digest.
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(src, "pkg.test"), later, later)
	again, err := packBundle(link, true)
	if err != nil {
		t.Fatal(err)
	}
	if digest(again) != digest(data) {
		t.Errorf("a bundle touched again packs to digest %s, was %s", digest(again), digest(data))
	}
	os.WriteFile(filepath.Join(src, "pkg.test"), []byte("bin2"), 0o755)
	if changed, _ := packBundle(link, true); digest(changed) == digest(data) {
		t.Error("a bundle whose binary changed kept its digest")
	}
	os.WriteFile(filepath.Join(src, "pkg.test"), []byte("bin"), 0o755)
	dest := filepath.Join(t.TempDir(), "d")
	if err := unpackTree(data, dest); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"pkg.test": "bin", "pkg/testdata/in/x.json": "{}"} {
		got, err := os.ReadFile(filepath.Join(dest, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	if err := unpackDir(data, t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a plain file name") {
		t.Errorf("a tree unpacked as a flat dir: %v", err)
	}
}

// TestUnpackDirRefuses: no entry of a result's archive leads out of the
// trial dir or makes anything but a plain file; a bundle's tree may nest.
func TestUnpackDirRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		hdr  tar.Header
	}{
		{"parent", tar.Header{Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644}},
		{"nested", tar.Header{Name: "a/b", Typeflag: tar.TypeReg, Mode: 0o644}},
		{"absolute", tar.Header{Name: "/tmp/evil", Typeflag: tar.TypeReg, Mode: 0o644}},
		{"symlink", tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}},
		{"dir", tar.Header{Name: "d", Typeflag: tar.TypeDir, Mode: 0o755}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			tw := tar.NewWriter(zw)
			if err := tw.WriteHeader(&tc.hdr); err != nil {
				t.Fatal(err)
			}
			tw.Close()
			zw.Close()
			dest := t.TempDir()
			if err := unpackDir(buf.Bytes(), dest); err == nil {
				t.Errorf("unpacked %q", tc.hdr.Name)
			}
			// A bundle's tree takes a nested name, nothing else.
			if err := unpackTree(buf.Bytes(), t.TempDir()); (err == nil) != (tc.name == "nested") {
				t.Errorf("unpackTree %q: %v", tc.hdr.Name, err)
			}
		})
	}
}

func TestRelocate(t *testing.T) {
	tr := &record.Trial{Dir: "/w/trials/1-3", Nodes: []record.Node{{Name: "n1", Log: "/w/trials/1-3/n1.log"}, {Name: "n2", Log: "/elsewhere/n2.log"}}}
	relocate(tr, "/c/trials/1-3")
	if tr.Dir != "/c/trials/1-3" || tr.Nodes[0].Log != "/c/trials/1-3/n1.log" || tr.Nodes[1].Log != "/elsewhere/n2.log" {
		t.Errorf("relocated: %+v", tr)
	}
}

// fakePolicy counts the calls a coordinator makes for its workers.
type fakePolicy struct {
	mu      sync.Mutex
	plans   []int // indices planned, in order
	decided int
}

func (f *fakePolicy) PlanTrial(info policy.TrialInfo) policy.Plan {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plans = append(f.plans, info.Index)
	return policy.Plan{Sites: []uint32{0}, States: true}
}

func (f *fakePolicy) Decide(req *policy.Request) policy.Decision {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decided++
	if req.Site == nil || req.Site.ID != "s0" {
		return policy.Decision{}
	}
	return policy.Decision{Fault: policy.Fault{Kind: catalog.KindError, Error: 1}}
}

func (f *fakePolicy) Observe(*policy.Observation) policy.Partition { return policy.Partition{} }

// TestCoordinatorRecordsOnce drives a coordinator over an embedded server
// as two deliveries of one trial would: the first worker begins and dies,
// the second begins afresh (planned again), a stale call of the first is
// granted nothing, the second's result is recorded and a late result of
// the first is dropped.
func TestCoordinatorRecordsOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "nats://" + l.Addr().String()
	l.Close()
	conn, err := Dial(addr, Auth{Token: "secret"}, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if !conn.Embedded() {
		t.Fatal("no server answered, yet none was embedded")
	}
	if _, err := Dial(addr, Auth{Token: "wrong"}, "", nil); err == nil {
		t.Error("a wrong token connected")
	}
	bundle := t.TempDir()
	os.WriteFile(filepath.Join(bundle, "manifest.json"), []byte("{}"), 0o644)
	cat := &catalog.Catalog{Sites: []catalog.Site{{Index: 0, ID: "s0"}}}
	co, err := NewCoordinator(ctx, conn, CoordinatorOptions{Bundle: bundle, Config: []byte("name: x\n"), Catalog: cat, Slots: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer co.Close()

	pol := &fakePolicy{}
	dir := filepath.Join(t.TempDir(), "trials", "1-1")
	job := engine.RemoteJob{Campaign: 1, Index: 1, ID: "1-1", Dir: dir, Bound: time.Second, Baseline: &record.LogBaseline{}, Policy: pol, PolicyName: "fake"}
	type ran struct {
		res *engine.RemoteResult
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := co.Run(ctx, job)
		done <- ran{res, err}
	}()

	// The task as a worker sees it.
	cons, err := conn.JS.CreateOrUpdateConsumer(ctx, Stream, consumerConfig(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(1)
	if err != nil {
		t.Fatal(err)
	}
	var task Task
	for m := range batch.Messages() {
		if err := json.Unmarshal(m.Data(), &task); err != nil {
			t.Fatal(err)
		}
		m.Ack()
	}
	if task.ID != "1-1" || task.Policy != "fake" || task.Bundle == "" || task.Config == "" || task.Baseline == "" {
		t.Fatalf("task %+v", task)
	}
	p := &proxy{nc: conn.NC, coordinator: task.Coordinator, timeout: 5 * time.Second, live: map[int]live{}}
	call := func(name string, req, out any) {
		t.Helper()
		if err := p.call(ctx, name, req, out); err != nil {
			t.Fatal(err)
		}
	}
	first, second := Delivery{Index: 1, Attempt: 1, Worker: "a"}, Delivery{Index: 1, Attempt: 2, Worker: "b"}
	var br BeginReply
	call("begin", BeginRequest{Delivery: first, Nodes: []string{"n1"}}, &br)
	if br.Err != "" || len(br.Plan.Sites) != 1 {
		t.Fatalf("begin: %+v", br)
	}
	call("begin", BeginRequest{Delivery: second, Nodes: []string{"n1"}}, &br)
	var dr DecideReply
	call("decide", DecideRequest{Delivery: first, Site: 0}, &dr)
	if dr.Decision.Fault.Kind != catalog.KindNone {
		t.Errorf("a stale delivery was granted %v", dr.Decision.Fault)
	}
	call("decide", DecideRequest{Delivery: second, Site: 0}, &dr)
	if dr.Decision.Fault.Kind != catalog.KindError {
		t.Errorf("the current delivery was granted %v, want an error", dr.Decision.Fault)
	}
	call("begin", BeginRequest{Delivery: first}, &br)
	if br.Err == "" || !strings.Contains(br.Err, "stale") {
		t.Errorf("a stale delivery began again: %+v", br)
	}

	obj := co.obj
	send := func(d Delivery, status record.Status) ResultReply {
		t.Helper()
		tr := &record.Trial{ID: "1-1", Index: 1, Dir: "/w/1-1", Status: status, Nodes: []record.Node{{Name: "n1", Log: "/w/1-1/n1.log"}}}
		rec, _ := json.Marshal(tr)
		src := t.TempDir()
		os.WriteFile(filepath.Join(src, "n1.log"), []byte(d.Worker+"\n"), 0o644)
		files, err := packDir(src)
		if err != nil {
			t.Fatal(err)
		}
		name := "result-" + d.Worker
		if _, err := obj.PutBytes(ctx, name+".json", rec); err != nil {
			t.Fatal(err)
		}
		if _, err := obj.PutBytes(ctx, name+".tar.gz", files); err != nil {
			t.Fatal(err)
		}
		var rr ResultReply
		call("result", ResultRequest{Delivery: d, Record: name + ".json", Files: name + ".tar.gz", Outcome: Outcome{Blocks: []uint32{3}}}, &rr)
		return rr
	}
	if rr := send(second, record.StatusFailed); rr.Err != "" {
		t.Fatalf("result: %s", rr.Err)
	}
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.res.Trial.Status != record.StatusFailed || got.res.Worker != "b" || got.res.Trial.Dir != dir || len(got.res.Blocks) != 1 {
		t.Errorf("result %+v, trial %+v", got.res, got.res.Trial)
	}
	if log, err := os.ReadFile(filepath.Join(dir, "n1.log")); err != nil || string(log) != "b\n" || got.res.Trial.Nodes[0].Log != filepath.Join(dir, "n1.log") {
		t.Errorf("trial files: %q, %v; log %s", log, err, got.res.Trial.Nodes[0].Log)
	}
	// The dead worker's late result is dropped; the files stay the
	// recorded ones.
	if rr := send(first, record.StatusOK); rr.Err != "" {
		t.Errorf("a late result: %s", rr.Err)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "n1.log")); string(log) != "b\n" {
		t.Errorf("a late result overwrote the recorded trial's files: %q", log)
	}
	call("begin", BeginRequest{Delivery: Delivery{Index: 1, Attempt: 3}}, &br)
	if !br.Recorded {
		t.Errorf("a third delivery of a recorded trial may begin: %+v", br)
	}
	if len(pol.plans) != 2 || pol.decided != 1 {
		t.Errorf("policy planned %v and decided %d times, want [1 1] and 1 (the stale delivery's call is not the policy's)", pol.plans, pol.decided)
	}
}

// BenchmarkDecide measures a worker's policy request answered by the
// coordinator over an embedded server on loopback: the cost a live site's
// request adds over a local controller's.
func BenchmarkDecide(b *testing.B) {
	ctx := context.Background()
	conn := testServer(b, nil)
	bundle := b.TempDir()
	os.WriteFile(filepath.Join(bundle, "manifest.json"), []byte("{}"), 0o644)
	cat := &catalog.Catalog{Sites: []catalog.Site{{Index: 0, ID: "s0"}}}
	co, err := NewCoordinator(ctx, conn, CoordinatorOptions{Bundle: bundle, Config: []byte("name: x\n"), Catalog: cat})
	if err != nil {
		b.Fatal(err)
	}
	defer co.Close()
	d := Delivery{Index: 1, Attempt: 1}
	co.pending[1] = &pending{job: engine.RemoteJob{Index: 1, Policy: &fakePolicy{}}, attempt: 1}
	p := &proxy{nc: conn.NC, coordinator: co.key, timeout: 5 * time.Second, live: map[int]live{}}
	p.started(d, policy.Plan{}, nil)
	req := &policy.Request{Trial: 1, Node: "n1", Site: &cat.Sites[0], Stack: []record.Frame{{Func: "main.f"}}}
	b.ResetTimer()
	for range b.N {
		if dec := p.Decide(req); dec.Fault.Kind != catalog.KindError {
			b.Fatalf("decision %+v", dec)
		}
	}
}

// TestProxyStopsOrphan: a delivery whose calls find no coordinator
// listening (it ended, or was killed) is stopped with errGone, and
// granted nothing; one whose coordinator only failed to answer in time
// runs on.
func TestProxyStopsOrphan(t *testing.T) {
	conn := testServer(t, nil)
	cat := &catalog.Catalog{Sites: []catalog.Site{{Index: 0, ID: "s0"}}}
	req := &policy.Request{Trial: 1, Node: "n1", Site: &cat.Sites[0]}

	p := &proxy{nc: conn.NC, coordinator: "nobody", timeout: 2 * time.Second, live: map[int]live{}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	p.started(Delivery{Index: 1, Attempt: 1}, policy.Plan{}, stop)
	if dec := p.Decide(req); dec.Fault.Kind != 0 {
		t.Errorf("no coordinator: decision %+v, want none", dec)
	}
	if !errors.Is(context.Cause(ctx), errGone) {
		t.Errorf("no coordinator: the delivery's cause %v, want errGone", context.Cause(ctx))
	}

	// A coordinator that listens but does not answer in time.
	sub, err := conn.NC.Subscribe(callSubject("slow", "decide"), func(*nats.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	p.coordinator, p.timeout = "slow", 100*time.Millisecond
	ctx2, stop2 := context.WithCancelCause(context.Background())
	defer stop2(nil)
	p.started(Delivery{Index: 1, Attempt: 1}, policy.Plan{}, stop2)
	if dec := p.Decide(req); dec.Fault.Kind != 0 {
		t.Errorf("slow coordinator: decision %+v, want none", dec)
	}
	if ctx2.Err() != nil {
		t.Errorf("slow coordinator: the delivery was stopped (%v), want it to run on", context.Cause(ctx2))
	}
}

func TestResultCoordinator(t *testing.T) {
	for name, want := range map[string]string{
		"result-dn698nscz1xb-16-1.json":  "dn698nscz1xb",
		"result-dn698nscz1xb-3-2.tar.gz": "dn698nscz1xb",
		"bundle-abc":                     "",
		"result-":                        "",
		"result-x":                       "",
	} {
		got, ok := resultCoordinator(name)
		if got != want || ok != (want != "") {
			t.Errorf("resultCoordinator(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

// TestSweepResults: a coordinator starting on a server deletes the result
// objects of coordinators nobody answers for (one killed with the server
// in the middle of a worker's put), and keeps a live coordinator's and
// every other object.
func TestSweepResults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := testServer(t, nil)
	_, obj, err := setup(ctx, conn.JS)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := conn.NC.Subscribe(callSubject("live", "ping"), func(m *nats.Msg) { m.Respond(nil) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	for _, name := range []string{"result-dead-16-1.json", "result-dead-3-2.tar.gz", "result-live-4-1.json", "bundle-x"} {
		if _, err := obj.PutBytes(ctx, name, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	sweepResults(ctx, conn.NC, obj, slog.New(slog.NewTextHandler(io.Discard, nil)))
	infos, err := obj.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, in := range infos {
		left = append(left, in.Name)
	}
	sort.Strings(left)
	if got := fmt.Sprint(left); got != "[bundle-x result-live-4-1.json]" {
		t.Errorf("objects left %s, want [bundle-x result-live-4-1.json]", got)
	}
}
