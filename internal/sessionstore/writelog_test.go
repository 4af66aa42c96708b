package sessionstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/events"
)

func writesJSON(t *testing.T, ws []events.KnownWrite) string {
	t.Helper()
	b, err := json.Marshal(ws)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The write log keeps what overwrites showed, in order, next to the record
// and out of the listing; it is bounded, copied for a fork and removed with
// the record.
func TestWriteLog(t *testing.T) {
	st := &Store{dir: filepath.Join(t.TempDir(), "state")}
	if ws, err := st.Writes(sidHere); err != nil || ws != nil {
		t.Fatalf("writes without a log = %v, %v", ws, err)
	}
	first := events.KnownWrite{Path: "/w/a.txt", Hash: "h1", Content: []acpsdk.ToolCallContent{acpsdk.ToolDiffContent("/w/a.txt", "new\n", "old\n")}}
	second := events.KnownWrite{Path: "/w/b.txt", Hash: "h2", Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("b"))}}
	if err := st.Save(Record{SessionID: sidHere, ThreadID: threadID, Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []events.KnownWrite{first, second} {
		if err := st.KeepWrite(sidHere, w); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := st.Writes(sidHere)
	if err != nil || writesJSON(t, ws) != writesJSON(t, []events.KnownWrite{first, second}) {
		t.Fatalf("writes = %s, %v", writesJSON(t, ws), err)
	}
	if recs, err := st.List(""); err != nil || len(recs) != 1 {
		t.Errorf("list = %+v, %v: the log is not a record", recs, err)
	}

	// A line cut short by a crash is skipped.
	logPath := filepath.Join(st.dir, sidHere+".writes.jsonl")
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"path":"/w/c.txt","ha`)
	f.Close()
	if ws, _ := st.Writes(sidHere); len(ws) != 2 {
		t.Errorf("writes with a cut line = %d entries, want 2", len(ws))
	}
	// and the entries after it are not glued to it.
	third := events.KnownWrite{Path: "/w/c.txt", Hash: "h3", Content: second.Content}
	fourth := events.KnownWrite{Path: "/w/d.txt", Hash: "h4", Content: second.Content}
	for _, w := range []events.KnownWrite{third, fourth} {
		if err := st.KeepWrite(sidHere, w); err != nil {
			t.Fatal(err)
		}
	}
	if ws, _ := st.Writes(sidHere); writesJSON(t, ws) != writesJSON(t, []events.KnownWrite{first, second, third, fourth}) {
		t.Errorf("writes after a cut line = %s", writesJSON(t, ws))
	}

	// Too large an entry is refused, nothing written.
	huge := events.KnownWrite{Path: "/w/h.txt", Hash: "h", Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(strings.Repeat("x", writeLogEntryMax)))}}
	before, _ := os.ReadFile(logPath)
	if err := st.KeepWrite(sidHere, huge); !errors.Is(err, ErrWriteTooLarge) {
		t.Errorf("huge entry: %v", err)
	}
	if after, _ := os.ReadFile(logPath); string(after) != string(before) {
		t.Error("a refused entry changed the log")
	}

	// Past writeLogMax the oldest entries go: the log stays bounded and
	// keeps the newest.
	big := strings.Repeat("y", writeLogEntryMax-200)
	n := 2*writeLogMax/writeLogEntryMax + 1
	for i := range n {
		w := events.KnownWrite{Path: "/w/big.txt", Hash: strings.Repeat("0", i), Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(big))}}
		if err := st.KeepWrite(sidHere, w); err != nil {
			t.Fatal(err)
		}
	}
	info, err := os.Stat(logPath)
	if err != nil || info.Size() > writeLogMax {
		t.Fatalf("log size %v (%v), want at most %d", info.Size(), err, writeLogMax)
	}
	ws, _ = st.Writes(sidHere)
	if len(ws) < writeLogMax/2/writeLogEntryMax-1 || ws[len(ws)-1].Hash != strings.Repeat("0", n-1) || ws[0].Path != "/w/big.txt" {
		t.Errorf("bounded log holds %d entries, last %q, first %s", len(ws), ws[len(ws)-1].Hash, ws[0].Path)
	}

	// A fork gets a copy; a session without a log copies none. (The logs
	// are compared as bytes: decoding a log at its bound costs about 0.1 s
	// of CPU, its entries are the SDK's types.)
	if err := st.Save(Record{SessionID: sidGone, Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	if err := st.CopyWrites(sidHere, sidGone); err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if fork, err := os.ReadFile(filepath.Join(st.dir, sidGone+".writes.jsonl")); err != nil || !bytes.Equal(fork, source) {
		t.Errorf("the fork's log differs from its source's (%v)", err)
	}
	const sidNone = "sess_00000000000000000000000000000003"
	if err := st.CopyWrites(sidNone, sidHere); err != nil {
		t.Fatal(err)
	}
	if after, err := os.ReadFile(logPath); err != nil || !bytes.Equal(after, source) {
		t.Errorf("copying no log changed the target's (%v)", err)
	}

	if err := st.Remove(sidHere); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(logPath); !os.IsNotExist(err) {
		t.Errorf("log after remove: %v", err)
	}
	for _, id := range malformedSessionIDs {
		if err := st.KeepWrite(string(id), first); !errors.Is(err, ErrBadSessionID) {
			t.Errorf("keepWrite %q: %v", id, err)
		}
	}
}

// A write that lands after session/delete removed the record (the call
// finished as the session was deleted) does not bring the log back.
func TestWriteLogAfterRemove(t *testing.T) {
	st := &Store{dir: t.TempDir()}
	if err := st.Save(Record{SessionID: sidHere, Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	w := events.KnownWrite{Path: "/w/a.txt", Hash: "h1", Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("a"))}}
	if err := st.KeepWrite(sidHere, w); err != nil {
		t.Fatal(err)
	}
	if err := st.Remove(sidHere); err != nil {
		t.Fatal(err)
	}
	if err := st.KeepWrite(sidHere, w); !errors.Is(err, ErrNoSession) {
		t.Errorf("keepWrite after remove: %v, want ErrNoSession", err)
	}
	if left, _ := filepath.Glob(filepath.Join(st.dir, "*")); len(left) != 0 {
		t.Errorf("left in the store after remove and a late write: %v", left)
	}
}

// A full log is cut to half its bound, so that the entries after are
// appends: over many entries the log is rewritten about once per half a
// bound of new entries, not once per entry. (A rewrite replaces the file,
// an append keeps it: os.SameFile tells them apart.)
func TestWriteLogTrimAmortised(t *testing.T) {
	st := &Store{dir: t.TempDir()}
	if err := st.Save(Record{SessionID: sidHere, Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(st.dir, sidHere+".writes.jsonl")
	entry := strings.Repeat("z", 16<<10)
	n := 4 * writeLogMax / len(entry)
	rewrites := 0
	var last os.FileInfo
	for i := range n {
		w := events.KnownWrite{Path: "/w/z.txt", Hash: strings.Repeat("1", i), Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(entry))}}
		if err := st.KeepWrite(sidHere, w); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(logPath)
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() > writeLogMax {
			t.Fatalf("log at %d bytes after entry %d", info.Size(), i)
		}
		if last != nil && !os.SameFile(last, info) {
			rewrites++
		}
		last = info
	}
	// The first rewrite comes after one bound of entries, each later one
	// after about half a bound.
	if want := (n*len(entry)-writeLogMax)/(writeLogMax/2) + 2; rewrites == 0 || rewrites > want {
		t.Errorf("%d entries of %d bytes rewrote the log %d times, want 1 to %d", n, len(entry), rewrites, want)
	}
}

// Past writeLogStoreMax, starting a log removes the least recently written
// logs until the rest fit.
func TestPruneWriteLogs(t *testing.T) {
	st := &Store{dir: t.TempDir()}
	ids := []string{
		"sess_00000000000000000000000000000011",
		"sess_00000000000000000000000000000012",
		"sess_00000000000000000000000000000013",
	}
	now := time.Now()
	for i, id := range ids {
		if err := st.Save(Record{SessionID: id, Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
		lp := filepath.Join(st.dir, id+".writes.jsonl")
		// Sparse: the size counts, no disk is used.
		if err := os.WriteFile(lp, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(lp, writeLogStoreMax/2+1); err != nil {
			t.Fatal(err)
		}
		// ids[0] written last, ids[1] first.
		mod := now.Add(-time.Duration([]int{1, 3, 2}[i]) * time.Hour)
		if err := os.Chtimes(lp, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	w := events.KnownWrite{Path: "/w/a.txt", Hash: "h1", Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("a"))}}
	if err := st.KeepWrite(sidHere, w); !errors.Is(err, ErrNoSession) {
		t.Fatalf("keepWrite without a record: %v", err)
	}
	if err := st.Save(Record{SessionID: sidHere, Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	if err := st.KeepWrite(sidHere, w); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, id := range append(ids, sidHere) {
		if _, err := os.Stat(filepath.Join(st.dir, id+".writes.jsonl")); err == nil {
			left = append(left, id)
		}
	}
	if want := []string{ids[0], sidHere}; !slices.Equal(left, want) {
		t.Errorf("logs left %v, want %v", left, want)
	}
	if ws, _ := st.Writes(sidHere); len(ws) != 1 {
		t.Errorf("the new log holds %d entries", len(ws))
	}
}

// The cost of an entry once the log is at its bound (amortised trimming).
func BenchmarkKeepWriteFull(b *testing.B) {
	st := &Store{dir: b.TempDir()}
	if err := st.Save(Record{SessionID: sidHere, Cwd: "/w"}); err != nil {
		b.Fatal(err)
	}
	w := events.KnownWrite{Path: "/w/z.txt", Hash: "h", Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(strings.Repeat("z", 4<<10)))}}
	for range 2 * writeLogMax / (4 << 10) {
		if err := st.KeepWrite(sidHere, w); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if err := st.KeepWrite(sidHere, w); err != nil {
			b.Fatal(err)
		}
	}
}
