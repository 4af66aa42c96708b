package acp

import (
	"encoding/json"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/sessionstore"
	"github.com/codexacp/codexacp/mcp"
)

// What an overwrite keeps: the content its call showed; a diff too large
// as a whole kept as its hunks; one too large even so, a creation, or an
// edit, not at all.
func TestKeepOverwrite(t *testing.T) {
	t.Parallel()
	a := &Agent{store: sessionstore.New(t.TempDir(), nil), log: discardLogger()}
	s := newSession(sidHere, "/w", nil, nil, events.Options{})
	if err := a.store.Save(s.record()); err != nil {
		t.Fatal(err)
	}
	change := func(tool, path, old, new string) *fsops.Change {
		ch := &fsops.Change{Tool: tool, Path: path, New: []byte(new), Created: old == ""}
		if old != "" {
			ch.Old = []byte(old)
		}
		ch.Diff = fsops.UnifiedDiff(path, ch.Old, ch.New)
		return ch
	}
	lines := func(n int, word string) string { return strings.Repeat(word+"\n", n) }
	large := lines(5000, "same") // ~25 KiB: old and new together pass the store's bound of a kept diff (64 KiB)
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
	ws, err := a.store.Writes(sidHere)
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

func writesJSON(t *testing.T, ws []events.KnownWrite) string {
	t.Helper()
	b, err := json.Marshal(ws)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
