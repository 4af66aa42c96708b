package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/shelledits"
)

// shellTurn is a codex exec turn in which a command (item_0) runs do
// between its start and its completion, with the given lines before the
// command.
func shellTurn(do func(), before ...string) func(context.Context, int, execrun.Invocation, func([]byte)) error {
	return func(_ context.Context, _ int, _ execrun.Invocation, onLine func([]byte)) error {
		lines := append([]string{`{"type":"thread.started","thread_id":"t"}`, `{"type":"turn.started"}`}, before...)
		for _, l := range lines {
			onLine([]byte(l))
		}
		onLine([]byte(`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'sed -i s/alpha/ALPHA/ a.txt'","aggregated_output":"","exit_code":null,"status":"in_progress"}}`))
		do()
		for _, l := range []string{
			`{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'sed -i s/alpha/ALPHA/ a.txt'","aggregated_output":"","exit_code":0,"status":"completed"}}`,
			`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"done"}}`,
			`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}`,
		} {
			onLine([]byte(l))
		}
		return nil
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func setMode(t *testing.T, h *harness, sid acpsdk.SessionId, mode backend.Mode) {
	t.Helper()
	if _, err := h.editor.Conn.SetSessionMode(h.ctx, acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: acpsdk.SessionModeId(mode)}); err != nil {
		t.Fatal(err)
	}
}

// toolUpdateIDs lists the tool updates as "id status".
func toolUpdateIDs(h *harness) []string {
	var out []string
	for _, n := range h.editor.Updates() {
		switch u := n.Update; {
		case u.ToolCall != nil:
			out = append(out, string(u.ToolCall.ToolCallId)+" "+string(u.ToolCall.Status))
		case u.ToolCallUpdate != nil:
			st := ""
			if u.ToolCallUpdate.Status != nil {
				st = string(*u.ToolCallUpdate.Status)
			}
			out = append(out, string(u.ToolCallUpdate.ToolCallId)+" "+st)
		}
	}
	return out
}

func findToolCall(h *harness, id acpsdk.ToolCallId) *acpsdk.SessionUpdateToolCall {
	for _, n := range h.editor.Updates() {
		if tc := n.Update.ToolCall; tc != nil && tc.ToolCallId == id {
			return tc
		}
	}
	return nil
}

// In auto mode a command's changes follow its completion as a completed
// edit tool call, a diff per file.
func TestShellEditsFollowTheCommand(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	a, b := filepath.Join(cwd, "a.txt"), filepath.Join(cwd, "b.txt")
	writeTestFile(t, a, "alpha\nbeta\n")
	be := &fakeBackend{script: shellTurn(func() {
		writeTestFile(t, a, "alpha\nBETA\n")
		writeTestFile(t, b, "new\n")
	})}
	h := startAgent(t, be, fakeeditor.Options{FS: true})
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	if _, err := h.prompt(sid, "go"); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(toolUpdateIDs(h), ", ")
	if want := "t1-item_0 in_progress, t1-item_0 completed, shell-edits-t1-item_0 completed"; got != want {
		t.Fatalf("tool updates = %s, want %s", got, want)
	}
	tc := findToolCall(h, "shell-edits-t1-item_0")
	if tc.Kind != acpsdk.ToolKindEdit || tc.Title != "Shell edits: a.txt, b.txt" {
		t.Errorf("kind %q title %q", tc.Kind, tc.Title)
	}
	if len(tc.Content) != 2 || tc.Content[0].Diff == nil || tc.Content[1].Diff == nil {
		t.Fatalf("content = %+v", tc.Content)
	}
	d := tc.Content[0].Diff
	if d.Path != a || d.OldText == nil || *d.OldText != "alpha\nbeta\n" || d.NewText != "alpha\nBETA\n" {
		t.Errorf("a.txt diff = %+v", d)
	}
	if d := tc.Content[1].Diff; d.Path != b || d.OldText != nil || d.NewText != "new\n" {
		t.Errorf("b.txt diff = %+v", d)
	}
	if len(tc.Locations) != 2 || tc.Locations[0].Line == nil || *tc.Locations[0].Line != 2 {
		t.Errorf("locations = %+v", tc.Locations)
	}
	raw, _ := json.Marshal(tc.RawInput)
	if !strings.Contains(string(raw), "sed -i s/alpha/ALPHA/ a.txt") {
		t.Errorf("rawInput = %s", raw)
	}
}

// A turn that ends leaves its tracker to the session where it watches the
// workspace: the next turn moves the baseline on (no new tracker, nothing
// read again where nothing changed), and what changed between the turns —
// a file the user saved — is not the next command's.
func TestShellEditsKeepTheTrackerBetweenTurns(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	a, b := filepath.Join(cwd, "a.txt"), filepath.Join(cwd, "b.txt")
	writeTestFile(t, a, "alpha\n")
	writeTestFile(t, b, "bravo\n")
	var made atomic.Int32
	be := &fakeBackend{script: func(ctx context.Context, n int, inv execrun.Invocation, onLine func([]byte)) error {
		if n == 0 {
			return shellTurn(func() { writeTestFile(t, a, "ALPHA\n") })(ctx, n, inv, onLine)
		}
		return shellTurn(func() { writeTestFile(t, b, "BRAVO\n") })(ctx, n, inv, onLine)
	}}
	h := startAgentWith(t, Options{Backend: be, ContextWindow: 272000,
		newShellTracker: func(roots []string, lim shelledits.Limits) *shelledits.Tracker {
			made.Add(1)
			return shelledits.New(roots, lim)
		}}, fakeeditor.Options{FS: true})
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeAuto)
	if _, err := h.prompt(sid, "go"); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, a, "saved between the turns\n")
	if _, err := h.prompt(sid, "again"); err != nil {
		t.Fatal(err)
	}
	tc := findToolCall(h, "shell-edits-t2-item_0")
	if tc == nil || tc.Title != "Shell edits: b.txt" || len(tc.Content) != 1 || tc.Content[0].Diff == nil {
		t.Fatalf("second turn's shell edits = %+v", tc)
	}
	if d := tc.Content[0].Diff; d.OldText == nil || *d.OldText != "bravo\n" || d.NewText != "BRAVO\n" {
		t.Errorf("b.txt diff = %+v", d)
	}
	want := int32(2) // nothing watched: a tracker per turn
	if runtime.GOOS == "linux" {
		want = 1
	}
	if got := made.Load(); got != want {
		t.Errorf("trackers made for two turns: %d, want %d", got, want)
	}
}

// In ask mode the shell cannot write: nothing is compared or shown (the
// script's write stands for one the sandbox would have refused).
func TestShellEditsNotInAskMode(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	a := filepath.Join(cwd, "a.txt")
	writeTestFile(t, a, "alpha\n")
	be := &fakeBackend{script: shellTurn(func() { writeTestFile(t, a, "ALPHA\n") })}
	h := startAgent(t, be, fakeeditor.Options{FS: true})
	sid := h.newSession(t, cwd)
	if _, err := h.prompt(sid, "go"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(toolUpdateIDs(h), ", "); got != "t1-item_0 in_progress, t1-item_0 completed" {
		t.Errorf("tool updates = %s", got)
	}
}

// A file our own tool changed before the command is not the command's: the
// tool showed its diff.
func TestShellEditsLeaveOwnToolEditsOut(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	a, b := filepath.Join(cwd, "a.txt"), filepath.Join(cwd, "b.txt")
	writeTestFile(t, a, "alpha\n")
	writeTestFile(t, b, "bravo\n")
	args, _ := json.Marshal(map[string]string{"path": b})
	tool := `{"type":"item.completed","item":{"id":"item_9","type":"mcp_tool_call","server":"acp","tool":"write_text_file","arguments":` +
		string(args) + `,"result":{"content":[]},"status":"completed"}}`
	be := &fakeBackend{script: func(ctx context.Context, n int, inv execrun.Invocation, onLine func([]byte)) error {
		return shellTurn(func() { writeTestFile(t, a, "ALPHA\n") })(ctx, n, inv, func(line []byte) {
			if strings.Contains(string(line), "item.started") {
				// The tool wrote before the command started.
				writeTestFile(t, b, "by the tool\n")
				onLine([]byte(tool))
			}
			onLine(line)
		})
	}}
	h := startAgent(t, be, fakeeditor.Options{FS: true})
	sid := h.newSession(t, cwd)
	setMode(t, h, sid, backend.ModeFullAccess)
	if _, err := h.prompt(sid, "go"); err != nil {
		t.Fatal(err)
	}
	tc := findToolCall(h, "shell-edits-t1-item_0")
	if tc == nil || tc.Title != "Shell edits: a.txt" || len(tc.Content) != 1 {
		t.Fatalf("shell edits = %+v", tc)
	}
}

func TestShellEditsUpdate(t *testing.T) {
	t.Parallel()
	display := func(p string) string { return strings.TrimPrefix(p, "/w/") }
	rep := shelledits.Report{
		Changes: []shelledits.Change{
			{Path: "/w/gone.txt", Op: shelledits.Deleted, Old: []byte("bye\n"), OldSize: 4, NewSize: -1},
			{Path: "/w/img.png", Op: shelledits.Modified, Omitted: shelledits.OmitBinary, OldSize: 2048, NewSize: 3 << 20},
			{Path: "/w/new.txt", Op: shelledits.Created, New: []byte("hi\n"), OldSize: -1, NewSize: 3},
			{Path: "/w/x.go", Op: shelledits.Modified, Old: []byte("a\nb\nc\n"), New: []byte("a\nb\nC\n"), OldSize: 6, NewSize: 6},
		},
		More:  []string{"/w/m1", "/w/m2"},
		Notes: []string{"/w has more than 20000 files: only the first 20000 (breadth first) were compared"},
	}
	u := shellEditsUpdate("shell-edits-t1-item_0", "gofmt -w .", rep, display)
	tc := u.ToolCall
	if tc == nil || tc.Status != acpsdk.ToolCallStatusCompleted || tc.Kind != acpsdk.ToolKindEdit {
		t.Fatalf("update = %+v", u)
	}
	if tc.Title != "Shell edits: gone.txt, img.png, new.txt and 3 more" {
		t.Errorf("title = %q", tc.Title)
	}
	if len(tc.Content) != 4 {
		t.Fatalf("content = %+v", tc.Content)
	}
	if d := tc.Content[0].Diff; d == nil || d.NewText != "" || d.OldText == nil || *d.OldText != "bye\n" {
		t.Errorf("deleted = %+v", tc.Content[0])
	}
	if d := tc.Content[1].Diff; d == nil || d.OldText != nil || d.NewText != "hi\n" {
		t.Errorf("created = %+v", tc.Content[1])
	}
	if d := tc.Content[2].Diff; d == nil || *d.OldText != "a\nb\nc\n" || d.NewText != "a\nb\nC\n" {
		t.Errorf("modified = %+v", tc.Content[2])
	}
	text := tc.Content[3].Content.Content.Text.Text
	want := "modified img.png: binary file (2.0 KiB → 3.0 MiB)\n2 more files changed, not shown: m1, m2\n" + rep.Notes[0]
	if text != want {
		t.Errorf("text = %q, want %q", text, want)
	}
	if len(tc.Locations) != 4 || tc.Locations[0].Line != nil || *tc.Locations[3].Line != 3 {
		t.Errorf("locations = %+v", tc.Locations)
	}
	// Only files past the limits.
	u = shellEditsUpdate("x", "", shelledits.Report{More: []string{"/w/a"}}, display)
	if u.ToolCall.Title != "Shell edits: 1 file" {
		t.Errorf("title = %q", u.ToolCall.Title)
	}
}

// The shell may write without a question per command in auto and
// full-access, and in ask mode once the user allowed commands always — in
// that session only, not in another with the same id (another agent's).
func TestShellMayWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode      backend.Mode
		runAlways bool
		want      bool
	}{
		{backend.ModeReadOnly, false, false},
		{backend.ModeReadOnly, true, false},
		{backend.ModeAsk, false, false},
		{backend.ModeAsk, true, true},
		{backend.ModeAuto, false, true},
		{backend.ModeFullAccess, false, true},
	} {
		t.Run(fmt.Sprintf("%s always=%v", tc.mode, tc.runAlways), func(t *testing.T) {
			s := newSession("sess_same", t.TempDir(), nil, nil, events.Options{})
			s.mode = tc.mode
			other := newSession("sess_same", t.TempDir(), nil, nil, events.Options{})
			other.mode = tc.mode
			s.runAlways.Store(tc.runAlways)
			if got := shellMayWrite(s); got != tc.want {
				t.Errorf("shellMayWrite = %v, want %v", got, tc.want)
			}
			if got, want := shellMayWrite(other), tc.mode == backend.ModeAuto || tc.mode == backend.ModeFullAccess; got != want {
				t.Errorf("another session with the same id: shellMayWrite = %v, want %v", got, want)
			}
		})
	}
}
