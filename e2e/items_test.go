package e2e_test

import (
	"encoding/json"
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
// items, shown as tool calls live and after session/load.
func TestAppServerSubagentVisible(t *testing.T) {
	const task = "Count the files in the workspace"
	e := start(t, setup{backend: "app-server", fs: true, mode: "auto", args: []string{"-c", "features.multi_agent_v2=true"}})
	args, err := json.Marshal(map[string]string{"task_name": "counter", "message": task, "fork_turns": "none"})
	if err != nil {
		t.Fatal(err)
	}
	// The subagent's request and the parent's next one race for the
	// replies: both get the same answer. The third reply serves a parent
	// request for the subagent's result, should codex make one.
	e.mock.Enqueue(
		mockapi.Reply(mockapi.NamespacedCall("call_spawn", "collaboration", "spawn_agent", string(args))),
		mockapi.Reply(mockapi.Message("done")),
		mockapi.Reply(mockapi.Message("done")),
		mockapi.Reply(mockapi.Message("done")),
	)
	e.mustPrompt("delegate")
	const title = "Started agent /root/counter"
	if tc := toolCallTitled(toolUpdates(e), title); tc == nil || tc.Kind != acpsdk.ToolKindOther || tc.Status != acpsdk.ToolCallStatusCompleted {
		t.Errorf("spawned agent shown as %+v, want a completed tool call %q", tc, title)
	}
	// The subagent's own model request: its task, addressed to it.
	ran := false
	for _, r := range e.mock.Requests() {
		for _, it := range r.Input() {
			b, err := json.Marshal(it)
			if err != nil {
				t.Fatal(err)
			}
			ran = ran || it["recipient"] == "/root/counter" && strings.Contains(string(b), task)
		}
	}
	if !ran {
		t.Errorf("no model request of the subagent with its task %q", task)
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

// toolCallTitled is the state of the first tool call with that title.
func toolCallTitled(us []acpsdk.SessionUpdate, title string) *toolCallState {
	var st *toolCallState
	var id acpsdk.ToolCallId
	for _, u := range us {
		if tc := u.ToolCall; tc != nil && st == nil && tc.Title == title {
			st, id = &toolCallState{Kind: tc.Kind, Title: tc.Title, Status: tc.Status, Locations: tc.Locations}, tc.ToolCallId
		}
		if tu := u.ToolCallUpdate; st != nil && tu != nil && tu.ToolCallId == id && tu.Status != nil {
			st.Status = *tu.Status
		}
	}
	return st
}
