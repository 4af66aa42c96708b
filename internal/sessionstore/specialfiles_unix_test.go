//go:build unix

package sessionstore_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/sessionstore"
	"github.com/codexacp/codexacp/internal/sessionstore/sessionstoretest"
	"github.com/codexacp/codexacp/internal/syncbuf"
	"github.com/codexacp/codexacp/internal/testkit"
)

// threadID is the codex thread of the planted records.
const threadID = "01a20602-22f9-7a33-a8c4-4064f84c2b10"

// stateWait bounds every request of these tests: a regression hangs the
// request, and the test must fail rather than hang CI.
const stateWait = 30 * time.Second

// TestPlantedRecordIsOverTheBound keeps sessionstoretest's Huge record what
// its name says: past the store's bound on a record's file.
func TestPlantedRecordIsOverTheBound(t *testing.T) {
	state := t.TempDir()
	sessionstoretest.Plant(t, state, t.TempDir(), threadID)
	fi, err := os.Stat(filepath.Join(state, sessionstoretest.Huge+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() <= sessionstore.RecordMax {
		t.Errorf("the planted huge record is %d bytes, within the bound %d", fi.Size(), sessionstore.RecordMax)
	}
}

// TestStoreListLogsEachSkippedRecordOnce: a listing skips every planted
// file with one log line naming it, and lists the good records.
func TestStoreListLogsEachSkippedRecordOnce(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	sessionstoretest.Plant(t, state, cwd, threadID)
	// Not records at all: not logged.
	if err := os.WriteFile(filepath.Join(state, "notes.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	st := sessionstore.New(state, slog.New(slog.NewTextHandler(&logs, nil)))
	done := make(chan []sessionstore.Record, 1)
	go func() {
		recs, err := st.List("")
		if err != nil {
			t.Error(err)
		}
		done <- recs
	}()
	var recs []sessionstore.Record
	select {
	case recs = <-done:
	case <-time.After(stateWait):
		t.Fatalf("list did not return within %v", stateWait)
	}
	if len(recs) != 2 {
		t.Errorf("listed %d records, want the 2 good ones", len(recs))
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	for _, id := range []string{sessionstoretest.FIFO, sessionstoretest.Zero, sessionstoretest.Huge, sessionstoretest.Corrupt, sessionstoretest.Linked} {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, id) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d log lines, want 1:\n%s", id, n, logs.String())
		}
	}
	if len(lines) != 5 {
		t.Errorf("%d log lines, want 5:\n%s", len(lines), logs.String())
	}
}

// TestKeepWriteReplacesSpecialLog: a write log that is a FIFO, a link to
// /dev/zero or oversized is neither waited on, written through nor read:
// it is replaced by a regular log of the new entry.
func TestKeepWriteReplacesSpecialLog(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	sessionstoretest.Plant(t, state, cwd, threadID)
	st := sessionstore.New(state, testkit.DiscardLogger())
	oversized := "sess_00000000000000000000000000000000"
	if err := st.Save(sessionstore.Record{SessionID: oversized, Cwd: cwd, Mode: "ask"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sessionstore.WriteLogPath(filepath.Join(state, oversized+".json")), make([]byte, sessionstore.WriteLogMax+1), 0o600); err != nil {
		t.Fatal(err)
	}
	w := events.KnownWrite{Path: "/w/a.txt", Hash: "h", Content: nil}
	for _, id := range []string{sessionstoretest.FIFOLog, sessionstoretest.ZeroLog, oversized} {
		done := make(chan error, 1)
		go func() { done <- st.KeepWrite(id, w) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("keepWrite %s: %v", id, err)
			}
		case <-time.After(stateWait):
			t.Fatalf("keepWrite %s did not return within %v", id, stateWait)
		}
		lp := sessionstore.WriteLogPath(filepath.Join(state, id+".json"))
		fi, err := os.Lstat(lp)
		if err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("%s: log is %v (%v), want a regular file", id, fi, err)
		}
		got, err := st.Writes(id)
		if err != nil || len(got) != 1 || got[0].Path != w.Path {
			t.Errorf("%s: writes = %+v, %v; want the one entry", id, got, err)
		}
	}
}
