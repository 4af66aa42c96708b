//go:build unix

package sessionstore

import (
	"encoding/json"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/syncbuf"
)

// Session ids of the special files planted in a state directory.
const (
	sidFIFO    = "sess_00000000000000000000000000000010"
	sidZero    = "sess_00000000000000000000000000000011"
	sidHuge    = "sess_00000000000000000000000000000012"
	sidCorrupt = "sess_00000000000000000000000000000013"
	sidFIFOLog = "sess_00000000000000000000000000000014"
	sidZeroLog = "sess_00000000000000000000000000000015"
	sidLinked  = "sess_00000000000000000000000000000016"
)

// stateWait bounds every request of these tests: a regression hangs the
// request, and the test must fail rather than hang CI.
const stateWait = 30 * time.Second

// plantStateDir fills state with what a local process could put there: a
// FIFO and a link to /dev/zero named like records, an oversized and a
// corrupt record, a link to a good record elsewhere, and two good records
// whose write logs are a FIFO and a link to /dev/zero.
func plantStateDir(t *testing.T, state, cwd string) {
	t.Helper()
	st := New(state, nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	rec := func(id string) Record {
		return Record{SessionID: id, ThreadID: threadID, Cwd: cwd, Mode: "ask", UpdatedAt: time.Now()}
	}
	must(st.Save(rec(sidFIFOLog)))
	must(st.Save(rec(sidZeroLog)))
	must(syscall.Mkfifo(filepath.Join(state, sidFIFO+".json"), 0o600))
	must(os.Symlink("/dev/zero", filepath.Join(state, sidZero+".json")))
	huge := `{"sessionId":"` + sidHuge + `","threadId":"` + threadID + `","cwd":` + jsonString(cwd) +
		`,"mode":"ask","title":"` + strings.Repeat("x", recordMax) + `"}`
	must(os.WriteFile(filepath.Join(state, sidHuge+".json"), []byte(huge), 0o600))
	must(os.WriteFile(filepath.Join(state, sidCorrupt+".json"), []byte(`{"sessionId":`), 0o600))
	elsewhere := New(t.TempDir(), nil)
	must(elsewhere.Save(rec(sidLinked)))
	must(os.Symlink(filepath.Join(elsewhere.dir, sidLinked+".json"), filepath.Join(state, sidLinked+".json")))
	must(syscall.Mkfifo(filepath.Join(state, sidFIFOLog+".writes.jsonl"), 0o600))
	must(os.Symlink("/dev/zero", filepath.Join(state, sidZeroLog+".writes.jsonl")))
}

// TestStoreListLogsEachSkippedRecordOnce: a listing skips every planted
// file with one log line naming it, and lists the good records.
func TestStoreListLogsEachSkippedRecordOnce(t *testing.T) {
	state, cwd := t.TempDir(), t.TempDir()
	plantStateDir(t, state, cwd)
	// Not records at all: not logged.
	if err := os.WriteFile(filepath.Join(state, "notes.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	st := New(state, slog.New(slog.NewTextHandler(&logs, nil)))
	done := make(chan []Record, 1)
	go func() {
		recs, err := st.List("")
		if err != nil {
			t.Error(err)
		}
		done <- recs
	}()
	var recs []Record
	select {
	case recs = <-done:
	case <-time.After(stateWait):
		t.Fatalf("list did not return within %v", stateWait)
	}
	if len(recs) != 2 {
		t.Errorf("listed %d records, want the 2 good ones", len(recs))
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	for _, id := range []string{sidFIFO, sidZero, sidHuge, sidCorrupt, sidLinked} {
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
	plantStateDir(t, state, cwd)
	st := New(state, discardLogger())
	oversized := sidUnknown
	if err := st.Save(Record{SessionID: oversized, Cwd: cwd, Mode: "ask"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(WriteLogPath(filepath.Join(state, oversized+".json")), make([]byte, writeLogMax+1), 0o600); err != nil {
		t.Fatal(err)
	}
	w := events.KnownWrite{Path: "/w/a.txt", Hash: "h", Content: nil}
	for _, id := range []string{sidFIFOLog, sidZeroLog, oversized} {
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
		lp := WriteLogPath(filepath.Join(state, id+".json"))
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

type fakeFileInfo struct {
	fs.FileInfo
	mode fs.FileMode
	uid  uint32
}

func (f fakeFileInfo) Mode() fs.FileMode { return f.mode }
func (f fakeFileInfo) Sys() any          { return &syscall.Stat_t{Uid: f.uid} }

func TestRecordForeign(t *testing.T) {
	for _, tc := range []struct {
		mode fs.FileMode
		uid  uint32
		want string // "" for the user's own
	}{
		{0o600, 1000, ""},
		{0o644, 1000, ""},
		{0o400, 1000, ""},
		{0o620, 1000, "writable by group or others"},
		{0o602, 1000, "writable by group or others"},
		{0o600, 1001, "owned by uid 1001"},
		{0o600, 0, "owned by uid 0"},
	} {
		got := foreignOwner(fakeFileInfo{mode: tc.mode, uid: tc.uid}, 1000)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("mode %v uid %d: %q, want %q", tc.mode, tc.uid, got, tc.want)
		}
	}
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
