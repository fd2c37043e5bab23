package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// TestReportRestore: gofault report --restore TRIAL DIR unpacks what a
// failed trial kept into DIR: the hit member's files (ending zeros as
// holes), its logs; the omitted files are listed, not made.
func TestReportRestore(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	trialDir := t.TempDir()
	writePack(t, trialDir)
	if err := os.WriteFile(filepath.Join(trialDir, "n1.log"), []byte("n1 log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "gofault.db")
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	cid, err := st.CreateCampaign(ctx, store.Campaign{Name: "x", ConfigHash: "h", Policy: "random"})
	if err != nil {
		t.Fatal(err)
	}
	tr := &record.Trial{Index: 3, Status: record.StatusFailed, Policy: "random", Dir: trialDir}
	if err := st.SaveTrial(ctx, cid, tr); err != nil {
		t.Fatal(err)
	}
	st.Close()

	dest := filepath.Join(t.TempDir(), "t")
	var out, errb bytes.Buffer
	if code := run([]string{"report", "--db", db, "--restore", tr.ID, dest}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, s := range []string{"restored trial " + tr.ID + " into " + dest + ": 1 files", "67108864  n2/member/wal/0.wal"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("no %q in:\n%s", s, out.String())
		}
	}
	got, err := os.ReadFile(filepath.Join(dest, "n1/member/wal/0.wal"))
	if err != nil || len(got) != 1000 || string(got[:4]) != "wal!" || !bytes.Equal(got[4:], make([]byte, 996)) {
		t.Errorf("restored n1's WAL: %d bytes, %v", len(got), err)
	}
	if _, err := os.Stat(filepath.Join(dest, "n2/member/wal/0.wal")); !os.IsNotExist(err) {
		t.Errorf("an omitted file was made: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(dest, "n1.log")); err != nil || string(got) != "n1 log\n" {
		t.Errorf("restored log: %q, %v", got, err)
	}

	// Usage: DIR is required; a trial without a pack says why.
	if code := run([]string{"report", "--db", db, "--restore", tr.ID}, &out, &errb); code == 0 {
		t.Error("--restore without DIR: exit 0")
	}
	os.Remove(filepath.Join(trialDir, campaign.PackName))
	errb.Reset()
	if code := run([]string{"report", "--db", db, "--restore", tr.ID, t.TempDir()}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "keep_failed") {
		t.Errorf("--restore of a trial without a pack: exit %d, %s", code, errb.String())
	}
}

// writePack writes a pack as the campaign leaves it: n1's WAL with its
// ending zeros not stored, n2's WAL listed only.
func writePack(t *testing.T, dir string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range []struct {
		hdr  tar.Header
		data string
	}{
		{tar.Header{Name: "n1/member/wal/", Typeflag: tar.TypeDir, Mode: 0o755}, ""},
		{tar.Header{Name: "n1/member/wal/0.wal", Typeflag: tar.TypeReg, Mode: 0o600, Size: 4, PAXRecords: map[string]string{"GOFAULT.size": "1000"}}, "wal!"},
		{tar.Header{Name: "n2/member/wal/0.wal", Typeflag: tar.TypeReg, Mode: 0o600, PAXRecords: map[string]string{"GOFAULT.size": "67108864", "GOFAULT.omitted": "1"}}, ""},
	} {
		h.hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(&h.hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(h.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, campaign.PackName), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
