package acp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend/codexexec"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// A command codex exec refused (approval policy never) reaches the editor
// as a failed execute tool call with codex's reason, in its place: before
// the model's next message, though codex printed nothing for it. The
// records come from the thread's rollout, which codex writes as the turn
// goes (here: the fake codex appends them between two lines of output).
func TestExecRefusalShownAsFailedToolCall(t *testing.T) {
	t.Parallel()
	rollout := filepath.Join(t.TempDir(), "rollout-2026-11-27T17-46-55-th-1.jsonl")
	mustWrite(t, rollout, `{"type":"session_meta","payload":{"id":"th-1"}}`+"\n")
	appendRollout := func(lines ...string) {
		f, err := os.OpenFile(rollout, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, l := range lines {
			f.WriteString(l + "\n")
		}
	}
	const reason = "approval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never"
	runs := 0
	runner := lineRunnerFunc(func(ctx context.Context, inv execrun.Invocation, onLine func([]byte)) error {
		runs++
		onLine([]byte(`{"type":"thread.started","thread_id":"th-1"}`))
		if runs > 1 { // a turn that refuses nothing: the rollout grows by other records
			appendRollout(`{"type":"response_item","payload":{"type":"message","role":"user","content":[]}}`)
			onLine([]byte(`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}`))
			return nil
		}
		onLine([]byte(`{"type":"turn.started"}`))
		appendRollout(
			`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"touch /outside/x\",\"sandbox_permissions\":\"require_escalated\",\"justification\":\"write outside\"}","call_id":"call_1"}}`,
			`{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"`+reason+`"}}`)
		// A record still being written when the next event comes.
		appendRollout(`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"curl x\"}","call_id":"call_2"}}`)
		f, _ := os.OpenFile(rollout, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_2",`)
		onLine([]byte(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"I could not run it."}}`))
		f.WriteString(`"output":"` + reason + `"}}` + "\n")
		f.Close()
		onLine([]byte(`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}`))
		return nil
	})
	be := &codexexec.Backend{Runner: runner, Logger: discardLogger(), FindRollout: func(id string) (string, error) {
		if id != "th-1" {
			t.Errorf("looked for the rollout of %q", id)
		}
		return rollout, nil
	}}
	var observed []string // what a recording keeps (ObserveRollout)
	be.ObserveRollout = func(threadID, path string, record []byte) {
		if threadID != "th-1" || path != rollout {
			t.Errorf("observed a record of thread %q at %s", threadID, path)
		}
		observed = append(observed, string(record))
	}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	if _, err := h.prompt(sid, "touch /outside/x"); err != nil {
		t.Fatal(err)
	}
	var order []string
	var refused []*acpsdk.SessionUpdateToolCall
	for _, n := range h.editor.Updates() {
		switch u := n.Update; {
		case u.ToolCall != nil:
			refused = append(refused, u.ToolCall)
			order = append(order, "tool_call:"+u.ToolCall.Title)
		case u.AgentMessageChunk != nil:
			order = append(order, "message")
		}
	}
	if want := "tool_call:touch /outside/x message tool_call:curl x"; strings.Join(order, " ") != want {
		t.Errorf("updates %q, want %q", order, want)
	}
	// The shell calls and their refusals, whole (the second written in two
	// parts); not the session's metadata.
	if len(observed) != 4 || !strings.Contains(observed[0], `"call_id":"call_1"`) || !strings.HasSuffix(observed[3], `"output":"`+reason+`"}}`) {
		t.Errorf("observed records %q, want the two calls and their refusals", observed)
	}
	for _, c := range refused {
		text := ""
		if len(c.Content) == 1 && c.Content[0].Content != nil && c.Content[0].Content.Content.Text != nil {
			text = c.Content[0].Content.Content.Text.Text
		}
		if c.Kind != acpsdk.ToolKindExecute || c.Status != acpsdk.ToolCallStatusFailed ||
			!strings.Contains(text, reason) || !strings.Contains(text, "--backend app-server") {
			t.Errorf("refused command shown as %+v (%q)", c, text)
		}
	}

	// The next turn of the thread reads only what it appends.
	if _, err := h.prompt(sid, "again"); err != nil {
		t.Fatal(err)
	}
	var calls int
	for _, n := range h.editor.Updates() {
		if n.Update.ToolCall != nil {
			calls++
		}
	}
	if calls != 2 {
		t.Errorf("%d tool calls after a second turn that refused nothing new, want 2", calls)
	}
}
