package acp

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/mcp"
)

// Codex dies (its run ends with an error) while one of its file tools
// waits for an editor that never answers, not even the cancel, and while
// the tool's MCP connection stays open (nothing but the turn's end tells
// the call to stop). The call ends with the turn, failed; the session's
// next prompt edits another file at once.
func TestDeadTurnEndsItsCallsAndFreesTheSession(t *testing.T) {
	t.Parallel()
	host, err := mcp.NewHost(&mcp.HostOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Close() })

	reading := make(chan struct{})
	hung := make(chan struct{})
	t.Cleanup(func() { close(hung) })
	var hungPath string
	eopts := fakeeditor.Options{FS: true, BeforeFS: func(_ context.Context, method, path string) {
		if method == "fs/read_text_file" && path == hungPath {
			close(reading)
			<-hung // never answered, cancel or not
		}
	}}
	started := make(chan struct{}, 2)
	died := make(chan struct{})
	script := func(ctx context.Context, n int, _ execrun.Invocation, _ func([]byte)) error {
		started <- struct{}{}
		if n == 0 {
			<-died
			return &proc.ExitError{Code: 137}
		}
		<-ctx.Done()
		return context.Cause(ctx)
	}
	h := startAgentWith(t, Options{Backend: &fakeBackend{script: script}, Tools: host}, eopts)
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sid := h.newSession(t, cwd)
	if _, err := h.editor.Conn.SetSessionMode(h.ctx, acpsdk.SetSessionModeRequest{SessionId: sid, ModeId: acpsdk.SessionModeId(backend.ModeAuto)}); err != nil {
		t.Fatal(err)
	}
	s, err := h.agent.session(sid)
	if err != nil {
		t.Fatal(err)
	}
	hungPath = filepath.Join(cwd, "a.txt")
	other := filepath.Join(cwd, "b.txt")
	mustWrite(t, hungPath, "one\n")
	mustWrite(t, other, "beta\n")

	first := h.promptInBackground(sid, "read a.txt")
	waitFor(t, started, "the dead turn never reached its tool call")
	th := &toolsHarness{harness: h, host: host}
	client := th.connect(t, s.toolsToken) // open until the test ends: codex's connection lingering
	result := make(chan *mcpsdk.CallToolResult, 1)
	go func() {
		res, _ := client.CallTool(h.ctx, &mcpsdk.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": hungPath}})
		result <- res
	}()
	waitFor(t, reading, "the editor was never asked to read")
	close(died)

	select {
	case r := <-first:
		if r.err == nil {
			t.Errorf("the dead turn answered %+v, want an error", r.resp)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the dead turn's prompt did not answer")
	}
	select {
	case res := <-result:
		if res == nil || !res.IsError {
			t.Errorf("the dead turn's read did not fail: %+v", res)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the dead turn's read still runs")
	}
	var readID acpsdk.ToolCallId
	var last acpsdk.ToolCallStatus
	for _, n := range h.editor.Updates() {
		if u := n.Update.ToolCall; u != nil && u.Kind == acpsdk.ToolKindRead {
			readID = u.ToolCallId
		}
		if u := n.Update.ToolCallUpdate; u != nil && u.ToolCallId == readID && u.Status != nil {
			last = *u.Status
		}
	}
	if readID == "" || last != acpsdk.ToolCallStatusFailed {
		t.Errorf("the read's tool call %q ended %q, want failed", readID, last)
	}

	// The next prompt runs, and its call edits another file at once.
	h.promptInBackground(sid, "edit b.txt")
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the next prompt did not start its turn")
	}
	edited := make(chan *mcpsdk.CallToolResult, 1)
	go func() {
		res, _ := client.CallTool(h.ctx, &mcpsdk.CallToolParams{Name: "edit_text_file",
			Arguments: map[string]any{"path": other, "old_string": "beta", "new_string": "BETA"}})
		edited <- res
	}()
	select {
	case res := <-edited:
		if res == nil || res.IsError {
			t.Errorf("the next turn's edit: %+v", res)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the next turn's edit is held")
	}
	if got, _ := h.editor.Buffer(other); got != "BETA\n" {
		t.Errorf("b.txt buffer = %q", got)
	}
}
