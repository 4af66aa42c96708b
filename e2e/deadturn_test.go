//go:build linux

package e2e_test

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/e2e/mockapi"
)

// Codex killed (a crash, the OOM killer) while one of its file tools waits
// for an editor that never answers the read: the dead turn's call ends with
// the turn (failed), and the session's next prompt, editing another file,
// runs at once instead of waiting behind it.
func TestCodexKilledDuringHungEditorReadFreesTheSession(t *testing.T) {
	eachBackend(t, testCodexKilledDuringHungEditorRead)
}

func testCodexKilledDuringHungEditorRead(t *testing.T, backend string) {
	reading := make(chan struct{})
	hung := make(chan struct{}) // the editor never answers: not even when asked to stop
	t.Cleanup(func() { close(hung) })
	var hungPath string
	e := start(t, setup{backend: backend, fs: true, mode: "auto",
		beforeFS: func(ctx context.Context, method, path string) {
			if method == "fs/read_text_file" && path == hungPath {
				close(reading)
				<-hung
			}
		}})
	hungPath = e.writeFile("a.txt", "one\n")
	other := e.writeFile("b.txt", "beta\n")

	e.mock.Enqueue(mockapi.Reply(acpCall(t, "c_read", "read_text_file", map[string]any{"path": hungPath})))
	first := make(chan error, 1)
	go func() {
		_, err := e.prompt("read a.txt")
		first <- err
	}()
	select {
	case <-reading:
	case <-time.After(60 * time.Second):
		t.Fatal("the editor was never asked to read a.txt")
	}
	pid := turnCodex(t, e)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-first:
		if err == nil {
			t.Error("the prompt of the killed codex answered without an error")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the prompt of the killed codex did not answer")
	}
	// The read's tool call ended with its turn, failed.
	var readID acpsdk.ToolCallId
	var last string
	for _, u := range toolUpdates(e) {
		if u.ToolCall != nil && u.ToolCall.Kind == acpsdk.ToolKindRead && len(u.ToolCall.Locations) == 1 && u.ToolCall.Locations[0].Path == hungPath {
			readID = u.ToolCall.ToolCallId
		}
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == readID && u.ToolCallUpdate.Status != nil {
			last = string(*u.ToolCallUpdate.Status)
		}
	}
	if readID == "" || last != string(acpsdk.ToolCallStatusFailed) {
		t.Errorf("the dead turn's read (tool call %q) ended %q, want failed: %v", readID, last, statusesOf(toolUpdates(e)))
	}

	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "c_edit", "edit_text_file", map[string]any{"path": other, "old_string": "beta", "new_string": "BETA"})),
		mockapi.Reply(mockapi.Message("edited")),
	)
	// Bounded, so that a regression fails instead of hanging the suite.
	ctx, cancel := context.WithTimeout(e.ctx, 60*time.Second)
	defer cancel()
	resp, err := e.editor.Conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: e.session, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("edit b.txt")}})
	if err != nil {
		t.Fatalf("the next prompt: %v", err)
	}
	if resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("the next prompt stopped with %q", resp.StopReason)
	}
	if got, _ := e.editor.Buffer(other); got != "BETA\n" {
		t.Errorf("b.txt buffer = %q, want the edit", got)
	}
}

// turnCodex is the pid of the codex process running the session's turn:
// on exec the `codex exec` child, on app-server the app-server (not the
// agent's configuration server).
func turnCodex(t *testing.T, e *env) int {
	t.Helper()
	var tree []proc
	for _, p := range descendants(e.agentPID) {
		tree = append(tree, p)
		if !strings.Contains(p.cmdline+" ", codexCommand[e.backend]) || hasEnv(strconv.Itoa(p.pid), appserver.ConfigReadEnv+"=1") {
			continue
		}
		return p.pid
	}
	t.Fatalf("no %s codex among the agent's descendants:\n%s", e.backend, procList(tree))
	return 0
}

func statusesOf(us []acpsdk.SessionUpdate) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = status(u)
	}
	return out
}
