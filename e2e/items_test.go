package e2e_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// Web searches, image views and generated images (issue 16, point 7) and
// subagents (point 4) as tool calls, live and in a loaded session's history.

// webSearchCall is a hosted web search the model ran within its response.
func webSearchCall(query string) mockapi.Item {
	return mockapi.Item{"type": "web_search_call", "id": "ws_e2e_1", "status": "completed",
		"action": map[string]any{"type": "search", "query": query}}
}

func TestAppServerSearchAndImages(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true, mode: "auto"})
	png := e.writePNG("shot.png")
	args, err := json.Marshal(map[string]string{"path": png})
	if err != nil {
		t.Fatal(err)
	}
	e.mock.Enqueue(
		mockapi.Reply(webSearchCall("acp protocol spec"), mockapi.FunctionCall("call_view", "view_image", string(args))),
		mockapi.Reply(mockapi.Message("looked")),
	)
	e.mustPrompt("search and look")
	search, view := lastToolCalls(toolUpdates(e))
	if search == nil || search.Kind != acpsdk.ToolKindFetch || search.Title != "Web search: acp protocol spec" || search.Status != acpsdk.ToolCallStatusCompleted {
		t.Errorf("web search shown as %+v", search)
	}
	if view == nil || view.Kind != acpsdk.ToolKindRead || view.Title != "View image "+png || len(view.Locations) != 1 || view.Locations[0].Path != png || view.Status != acpsdk.ToolCallStatusCompleted {
		t.Errorf("image view shown as %+v", view)
	}

	// A loaded session shows them again.
	e.stop() // the app-server holds the thread until it exits

	e2 := e.restart(setup{backend: "app-server"})
	if _, err := e2.editor.Conn.LoadSession(e2.ctx, acpsdk.LoadSessionRequest{SessionId: e.session, Cwd: e.cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	search, view = lastToolCalls(toolUpdates(e2))
	if search == nil || search.Kind != acpsdk.ToolKindFetch || search.Title != "Web search: acp protocol spec" || search.Status != acpsdk.ToolCallStatusCompleted {
		t.Errorf("web search replayed as %+v", search)
	}
	if view == nil || view.Kind != acpsdk.ToolKindRead || view.Title != "View image "+png || view.Status != acpsdk.ToolCallStatusCompleted {
		t.Errorf("image view replayed as %+v", view)
	}
}

// toolCallState is a tool call as the editor sees it after its updates.
type toolCallState struct {
	Kind      acpsdk.ToolKind
	Title     string
	Status    acpsdk.ToolCallStatus
	Locations []acpsdk.ToolCallLocation
	Text      string // the text of its content as last sent (toolCallTitled)
}

// contentText joins the text blocks of tool call content.
func contentText(content []acpsdk.ToolCallContent) string {
	var parts []string
	for _, c := range content {
		if c.Content != nil && c.Content.Content.Text != nil {
			parts = append(parts, c.Content.Content.Text.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// lastToolCalls folds tool call updates into the state of the last web
// search (kind fetch) and image view (kind read) tool calls.
func lastToolCalls(us []acpsdk.SessionUpdate) (search, view *toolCallState) {
	calls := map[acpsdk.ToolCallId]*toolCallState{}
	for _, u := range us {
		if tc := u.ToolCall; tc != nil {
			st := &toolCallState{Kind: tc.Kind, Title: tc.Title, Status: tc.Status, Locations: tc.Locations}
			calls[tc.ToolCallId] = st
			switch tc.Kind {
			case acpsdk.ToolKindFetch:
				search = st
			case acpsdk.ToolKindRead:
				view = st
			}
		}
		if tu := u.ToolCallUpdate; tu != nil && calls[tu.ToolCallId] != nil && tu.Status != nil {
			calls[tu.ToolCallId].Status = *tu.Status
		}
	}
	return search, view
}

// TestAppServerSubagentVisible: codex 0.169 offers subagent tools only
// with multi_agent_v2 (its v1 tools are not offered: collabAgentToolCall
// items cannot be made to happen, see the events goldens for those). The
// model spawns an agent; the parent thread reports it as subAgentActivity
// items, shown as tool calls live and after session/load. The subagent's
// thread is routed to the parent's turn: its edit through our tools shows
// as a diff and reaches the editor, and the prompt answers once the
// subagent's turn is done.
func TestAppServerSubagentVisible(t *testing.T) {
	const task = "Count the files in the workspace"
	e := start(t, setup{backend: "app-server", fs: true, mode: "auto", args: []string{"-c", "features.multi_agent_v2=true"}})
	args, err := json.Marshal(map[string]string{"task_name": "counter", "message": task, "fork_turns": "none"})
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(e.cwd, "count.txt")
	// The subagent's requests and the parent's race: each gets its own
	// answers (a subagent's request carries the message addressed to it).
	// The parent's second "done" serves a request for the subagent's
	// result, should codex make one.
	child := func(r mockapi.Request) bool { return isSubagentRequest(t, r, task) }
	parent := func(r mockapi.Request) bool { return !child(r) }
	e.mock.Enqueue(
		mockapi.Reply(mockapi.NamespacedCall("call_spawn", "collaboration", "spawn_agent", string(args))),
		mockapi.Reply(acpCall(t, "call_sub_w", "write_text_file", map[string]any{"path": target, "content": "3 files\n"})).For(child),
		mockapi.Reply(mockapi.Message("counted")).For(child),
		mockapi.Reply(mockapi.Message("done")).For(parent),
		mockapi.Reply(mockapi.Message("done")).For(parent),
	)
	e.mustPrompt("delegate")
	const title = "Started agent /root/counter"
	tc := toolCallTitled(toolUpdates(e), title)
	if tc == nil || tc.Kind != acpsdk.ToolKindOther || tc.Status != acpsdk.ToolCallStatusCompleted {
		t.Fatalf("spawned agent shown as %+v, want a completed tool call %q", tc, title)
	}
	// The subagent's answer is its tool call's content, not the agent's text.
	if !strings.Contains(tc.Text, "counted") {
		t.Errorf("the subagent's message is not in its tool call: content %q", tc.Text)
	}
	if strings.Contains(agentText(e), "counted") {
		t.Errorf("the subagent's message is shown as the agent's text: %q", agentText(e))
	}
	// The subagent ran: its model requests, its task addressed to it, were
	// made before the prompt answered, and its edit is the session's.
	ran := 0
	for _, r := range e.mock.Requests() {
		if child(r) {
			ran++
		}
	}
	if ran != 2 {
		t.Errorf("subagent model requests = %d, want 2 (its task, then its edit's result)", ran)
	}
	if got, _ := e.editor.Buffer(target); got != "3 files\n" {
		t.Errorf("the subagent's edit in the editor: %q", got)
	}
	if !hasDiffFor(toolUpdates(e), target) {
		t.Errorf("the subagent's edit is not shown as a diff of %s", target)
	}

	e.stop()
	e2 := e.restart(setup{backend: "app-server"})
	if _, err := e2.editor.Conn.LoadSession(e2.ctx, acpsdk.LoadSessionRequest{SessionId: e.session, Cwd: e.cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	if tc := toolCallTitled(toolUpdates(e2), title); tc == nil || tc.Status != acpsdk.ToolCallStatusCompleted {
		t.Errorf("spawned agent replayed as %+v", tc)
	}
}

// A cancel while a subagent works interrupts it too: the prompt answers
// cancelled and codex gives up the subagent's model request.
func TestAppServerSubagentCancelled(t *testing.T) {
	const task = "Count the files in the workspace"
	e := start(t, setup{backend: "app-server", fs: true, mode: "auto", args: []string{"-c", "features.multi_agent_v2=true"}})
	args, err := json.Marshal(map[string]string{"task_name": "counter", "message": task, "fork_turns": "none"})
	if err != nil {
		t.Fatal(err)
	}
	child := func(r mockapi.Request) bool { return isSubagentRequest(t, r, task) }
	parent := func(r mockapi.Request) bool { return !child(r) }
	working, hold := mockapi.Hang()
	defer hold.Release()
	e.mock.Enqueue(
		mockapi.Reply(mockapi.NamespacedCall("call_spawn", "collaboration", "spawn_agent", string(args))),
		working.For(child),
		mockapi.Reply(mockapi.Message("done")).For(parent),
		mockapi.Reply(mockapi.Message("done")).For(parent),
	)
	done := e.promptAsync("delegate")
	<-hold.Reached() // the subagent is at work
	e.cancelAndExpectCancelled(done)
	<-hold.Abandoned() // codex gave up the subagent's request: its turn was interrupted
}

// isSubagentRequest reports a model request of the subagent: one that
// carries its task, addressed to it.
func isSubagentRequest(t *testing.T, r mockapi.Request, task string) bool {
	for _, it := range r.Input() {
		b, err := json.Marshal(it)
		if err != nil {
			t.Error(err)
			return false
		}
		if it["recipient"] == "/root/counter" && strings.Contains(string(b), task) {
			return true
		}
	}
	return false
}

// hasDiffFor reports a tool call (or update) with a diff of path.
func hasDiffFor(us []acpsdk.SessionUpdate, path string) bool {
	for _, u := range us {
		var content []acpsdk.ToolCallContent
		if tc := u.ToolCall; tc != nil {
			content = tc.Content
		}
		if tu := u.ToolCallUpdate; tu != nil {
			content = append(content, tu.Content...)
		}
		for _, c := range content {
			if c.Diff != nil && c.Diff.Path == path {
				return true
			}
		}
	}
	return false
}

// toolCallTitled is the state of the first tool call with that title.
func toolCallTitled(us []acpsdk.SessionUpdate, title string) *toolCallState {
	var st *toolCallState
	var id acpsdk.ToolCallId
	for _, u := range us {
		if tc := u.ToolCall; tc != nil && st == nil && tc.Title == title {
			st, id = &toolCallState{Kind: tc.Kind, Title: tc.Title, Status: tc.Status, Locations: tc.Locations, Text: contentText(tc.Content)}, tc.ToolCallId
		}
		if tu := u.ToolCallUpdate; st != nil && tu != nil && tu.ToolCallId == id {
			if tu.Status != nil {
				st.Status = *tu.Status
			}
			if tu.Content != nil {
				st.Text = contentText(tu.Content)
			}
		}
	}
	return st
}
