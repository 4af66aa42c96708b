package acp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/mcp"
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
	st := &sessionStore{dir: filepath.Join(t.TempDir(), "state")}
	if ws, err := st.writes(sidHere); err != nil || ws != nil {
		t.Fatalf("writes without a log = %v, %v", ws, err)
	}
	first := events.KnownWrite{Path: "/w/a.txt", Hash: "h1", Content: []acpsdk.ToolCallContent{acpsdk.ToolDiffContent("/w/a.txt", "new\n", "old\n")}}
	second := events.KnownWrite{Path: "/w/b.txt", Hash: "h2", Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("b"))}}
	for _, w := range []events.KnownWrite{first, second} {
		if err := st.keepWrite(sidHere, w); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.save(sessionRecord{SessionID: sidHere, ThreadID: loadThreadID, Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	ws, err := st.writes(sidHere)
	if err != nil || writesJSON(t, ws) != writesJSON(t, []events.KnownWrite{first, second}) {
		t.Fatalf("writes = %s, %v", writesJSON(t, ws), err)
	}
	if recs, err := st.list(""); err != nil || len(recs) != 1 {
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
	if ws, _ := st.writes(sidHere); len(ws) != 2 {
		t.Errorf("writes with a cut line = %d entries, want 2", len(ws))
	}

	// Too large an entry is refused, nothing written.
	huge := events.KnownWrite{Path: "/w/h.txt", Hash: "h", Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(strings.Repeat("x", writeLogEntryMax)))}}
	before, _ := os.ReadFile(logPath)
	if err := st.keepWrite(sidHere, huge); !errors.Is(err, errWriteTooLarge) {
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
		if err := st.keepWrite(sidHere, w); err != nil {
			t.Fatal(err)
		}
	}
	info, err := os.Stat(logPath)
	if err != nil || info.Size() > writeLogMax {
		t.Fatalf("log size %v (%v), want at most %d", info.Size(), err, writeLogMax)
	}
	ws, _ = st.writes(sidHere)
	if len(ws) < writeLogMax/writeLogEntryMax-1 || ws[len(ws)-1].Hash != strings.Repeat("0", n-1) || ws[0].Path != "/w/big.txt" {
		t.Errorf("bounded log holds %d entries, last %q, first %s", len(ws), ws[len(ws)-1].Hash, ws[0].Path)
	}

	// A fork gets a copy; a session without a log copies none.
	if err := st.copyWrites(sidHere, sidGone); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.writes(sidGone); writesJSON(t, got) != writesJSON(t, ws) {
		t.Error("the fork's log differs from its source's")
	}
	const sidNone = "sess_00000000000000000000000000000003"
	if err := st.copyWrites(sidNone, sidHere); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.writes(sidHere); len(got) != len(ws) {
		t.Error("copying no log changed the target's")
	}

	if err := st.remove(sidHere); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(logPath); !os.IsNotExist(err) {
		t.Errorf("log after remove: %v", err)
	}
	for _, id := range malformedSessionIDs {
		if err := st.keepWrite(string(id), first); !errors.Is(err, errBadSessionID) {
			t.Errorf("keepWrite %q: %v", id, err)
		}
	}
}

// What an overwrite keeps: the content its call showed; a diff too large
// as a whole kept as its hunks; one too large even so, a creation, or an
// edit, not at all.
func TestKeepOverwrite(t *testing.T) {
	a := &Agent{store: &sessionStore{dir: t.TempDir()}, log: discardLogger()}
	s := newSession(sidHere, "/w", nil, mcpSetup{}, events.Options{})
	change := func(tool, path, old, new string) *fsops.Change {
		ch := &fsops.Change{Tool: tool, Path: path, New: []byte(new), Created: old == ""}
		if old != "" {
			ch.Old = []byte(old)
		}
		ch.Diff = fsops.UnifiedDiff(path, ch.Old, ch.New)
		return ch
	}
	lines := func(n int, word string) string { return strings.Repeat(word+"\n", n) }
	large := lines(5000, "same") // ~25 KiB: old and new together pass writeLogEntryMax
	for _, tc := range []struct {
		ch *fsops.Change
	}{
		{change(fsops.ToolWriteTextFile, "/w/small.txt", "bye\n", "hello\n")},
		{change(fsops.ToolWriteTextFile, "/w/created.txt", "", "new\n")},
		{change(fsops.ToolEditTextFile, "/w/edited.txt", "a\n", "b\n")},
		{change(fsops.ToolWriteTextFile, "/w/large.txt", large+"old\n"+large, large+"new\n"+large)},
		{change(fsops.ToolWriteTextFile, "/w/rewritten.txt", lines(10000, "old"), lines(10000, "new"))},
	} {
		a.keepOverwrite(s, &mcp.Call{Path: tc.ch.Path}, tc.ch, diffContent(tc.ch))
	}
	ws, err := a.store.writes(sidHere)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0].Path != "/w/small.txt" || ws[1].Path != "/w/large.txt" {
		t.Fatalf("kept %s", writesJSON(t, ws))
	}
	if ws[0].Hash != fsops.HashOf([]byte("hello\n")) || writesJSON(t, ws[:1]) != writesJSON(t, []events.KnownWrite{{Path: "/w/small.txt", Hash: ws[0].Hash,
		Content: []acpsdk.ToolCallContent{acpsdk.ToolDiffContent("/w/small.txt", "hello\n", "bye\n")}}}) {
		t.Errorf("small overwrite kept as %s", writesJSON(t, ws[:1]))
	}
	if c := ws[1].Content; len(c) != 1 || c[0].Diff == nil || c[0].Diff.OldText == nil ||
		!strings.Contains(*c[0].Diff.OldText, "old\n") || !strings.Contains(c[0].Diff.NewText, "new\n") || len(c[0].Diff.NewText) > 1000 {
		t.Errorf("large overwrite kept as %s, want its hunk", writesJSON(t, ws[1:]))
	}
}
