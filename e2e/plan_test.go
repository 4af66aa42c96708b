package e2e_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// Plan mode on the app-server: codex plans (collaborationMode plan), the
// editor is asked whether to implement the plan, and yes runs the
// implementing turn in the chosen mode.

const planText = "1. Create hello.txt with a greeting.\n2. Done."

// proposedPlan is the model's answer in plan mode: codex turns the tagged
// block into a plan item.
func proposedPlan() mockapi.Item {
	return mockapi.Message("Here is the plan.\n<proposed_plan>\n" + planText + "\n</proposed_plan>\n")
}

// answering records the permission requests and answers each with the
// first option whose id pick returns true (cancelled when none).
type answering struct {
	mu    sync.Mutex
	asked []acpsdk.RequestPermissionRequest
	pick  func(id string) bool
}

func (a *answering) answer(req acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
	a.mu.Lock()
	a.asked = append(a.asked, req)
	a.mu.Unlock()
	for _, o := range req.Options {
		if a.pick(string(o.OptionId)) {
			return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Selected: &acpsdk.RequestPermissionOutcomeSelected{Outcome: "selected", OptionId: o.OptionId}}}
		}
	}
	return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}
}

func (a *answering) requests() []acpsdk.RequestPermissionRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.asked)
}

// planChunks counts the agent_message_chunks that carry a piece of the
// proposed plan (item/plan/delta streamed as the agent's text): those
// overlapping the plan's place in the agent's text.
func planChunks(e *env) int {
	var spans [][2]int
	var text strings.Builder
	for _, u := range e.editor.Updates() {
		if c := u.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			spans = append(spans, [2]int{text.Len(), text.Len() + len(c.Content.Text.Text)})
			text.WriteString(c.Content.Text.Text)
		}
	}
	at := strings.Index(text.String(), planText)
	if at < 0 {
		return 0
	}
	n := 0
	for _, sp := range spans {
		if sp[0] < at+len(planText) && sp[1] > at {
			n++
		}
	}
	return n
}

func (e *env) setPlanMode(on bool) {
	e.t.Helper()
	v := "default"
	if on {
		v = "plan"
	}
	resp, err := e.editor.Conn.SetSessionConfigOption(e.ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
		SessionId: e.session, ConfigId: "collaboration_mode", Value: acpsdk.SessionConfigValueId(v)}})
	if err != nil {
		e.t.Fatalf("set collaboration_mode: %v", err)
	}
	if got := configValue(resp.ConfigOptions, "collaboration_mode"); got != v {
		e.t.Fatalf("collaboration_mode = %q after setting %q", got, v)
	}
}

func configValue(opts []acpsdk.SessionConfigOption, id string) string {
	for _, o := range opts {
		if o.Select != nil && string(o.Select.Id) == id {
			return string(o.Select.CurrentValue)
		}
	}
	return ""
}

// collaborationMode is the mode codex put in the request's developer
// messages ("" when none).
// The input is the whole thread: the last such message is the turn's.
func collaborationMode(r mockapi.Request) string {
	mode := ""
	for _, t := range r.Texts("developer") {
		if strings.Contains(t, "<collaboration_mode>") {
			mode = "default"
			if strings.Contains(t, "<collaboration_mode># Plan Mode") {
				mode = "plan"
			}
		}
	}
	return mode
}

func TestPlanModeThenImplement(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pick      string // the switch question's answer
		implement bool
		command   bool // plan mode through "/plan <task>", not the picker
	}{
		{name: "implemented", pick: "implement:auto", implement: true},
		{name: "kept planning", pick: "stay"},
		{name: "via the plan command", pick: "implement:auto", implement: true, command: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ans := &answering{pick: func(id string) bool { return id == tc.pick }}
			e := start(t, setup{backend: "app-server", fs: true, permission: ans.answer})
			prompt := "plan a greeting file"
			if tc.command {
				prompt = "/plan " + prompt
			} else {
				e.setPlanMode(true)
			}
			target := filepath.Join(e.cwd, "hello.txt")
			e.mock.Enqueue(mockapi.Reply(proposedPlan()))
			if tc.implement {
				e.mock.Enqueue(
					mockapi.Reply(acpCall(t, "call_w", "write_text_file", map[string]any{"path": target, "content": "hello\n"})),
					mockapi.Reply(mockapi.Message("Implemented.")),
				)
			}
			r := e.mustPrompt(prompt)
			if r.StopReason != acpsdk.StopReasonEndTurn {
				t.Errorf("stopReason = %q", r.StopReason)
			}
			reqs := e.mock.Requests()
			if len(reqs) == 0 || collaborationMode(reqs[0]) != "plan" {
				t.Fatalf("the plan turn's request is not in plan mode")
			}
			if users := reqs[0].Texts("user"); !slices.Contains(users, "plan a greeting file") {
				t.Errorf("the plan turn's prompt: %q", users)
			}
			if n := strings.Count(agentText(e), planText); n != 1 {
				t.Errorf("the plan is shown %d times, want once: %q", n, agentText(e))
			}
			if n := planChunks(e); n < 2 {
				t.Errorf("the plan came in %d agent_message_chunk(s), want it streamed in several", n)
			}
			asked := ans.requests()
			if len(asked) != 1 {
				t.Fatalf("permission requests = %d, want 1 (the switch question)", len(asked))
			}
			q := asked[0]
			if q.ToolCall.Kind == nil || *q.ToolCall.Kind != acpsdk.ToolKindSwitchMode {
				t.Errorf("switch question tool call kind = %v", q.ToolCall.Kind)
			}
			var ids []string
			for _, o := range q.Options {
				ids = append(ids, string(o.OptionId))
			}
			if !slices.Contains(ids, "implement:auto") || !slices.Contains(ids, "implement:ask") || !slices.Contains(ids, "stay") || slices.Contains(ids, "implement:read-only") {
				t.Errorf("switch options = %v", ids)
			}
			var modeUpdates []string
			for _, n := range e.editor.Updates() {
				if u := n.Update.CurrentModeUpdate; u != nil {
					modeUpdates = append(modeUpdates, string(u.CurrentModeId))
				}
			}
			if !tc.implement {
				if len(reqs) != 1 || len(modeUpdates) != 0 {
					t.Errorf("kept planning, yet %d model requests and mode updates %v", len(reqs), modeUpdates)
				}
				// Still in plan mode: the next turn plans too.
				e.mock.Enqueue(mockapi.Reply(mockapi.Message("More thoughts.")))
				e.mustPrompt("think more")
				if reqs := e.mock.Requests(); collaborationMode(reqs[len(reqs)-1]) != "plan" {
					t.Errorf("the next turn left plan mode")
				}
				return
			}
			if !slices.Equal(modeUpdates, []string{"auto"}) {
				t.Errorf("current_mode_update = %v, want [auto]", modeUpdates)
			}
			if len(reqs) != 3 {
				t.Fatalf("model requests = %d, want 3", len(reqs))
			}
			if users := reqs[1].Texts("user"); !slices.Contains(users, "Implement the plan.") {
				t.Errorf("the implementing turn's prompt: %q", users)
			}
			if m := collaborationMode(reqs[1]); m != "default" {
				t.Errorf("the implementing turn still plans")
			}
			if got, _ := e.editor.Buffer(target); got != "hello\n" {
				t.Errorf("hello.txt in the editor = %q, want the implementing turn's write", got)
			}
			var last []acpsdk.SessionConfigOption
			for _, n := range e.editor.Updates() {
				if u := n.Update.ConfigOptionUpdate; u != nil {
					last = u.ConfigOptions
				}
			}
			if configValue(last, "collaboration_mode") != "default" || configValue(last, "mode") != "auto" {
				t.Errorf("config options after the switch: collaboration_mode %q, mode %q", configValue(last, "collaboration_mode"), configValue(last, "mode"))
			}
		})
	}
}

// A loaded session shows the proposed plan where it was: after the text
// around it (codex stores the plan as an item of its own).
func TestPlanModeLoadReplaysPlan(t *testing.T) {
	ans := &answering{pick: func(id string) bool { return id == "stay" }}
	e := start(t, setup{backend: "app-server", fs: true, permission: ans.answer})
	e.setPlanMode(true)
	e.mock.Enqueue(mockapi.Reply(proposedPlan()))
	e.mustPrompt("plan a greeting file")
	e.stop() // the app-server holds the thread until it exits

	e2 := e.restart(setup{backend: "app-server"})
	if _, err := e2.editor.Conn.LoadSession(e2.ctx, acpsdk.LoadSessionRequest{SessionId: e.session, Cwd: e.cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	text := agentText(e2)
	if at := strings.Index(text, planText); at < 0 || strings.Count(text, planText) != 1 || !strings.Contains(text[:at], "Here is the plan.") {
		t.Errorf("replayed agent text %q, want the message then the plan, once", text)
	}
}

// Plan mode promises nothing is edited until the plan is approved: in an
// auto session (whose writes need no question) a write the model attempts
// while planning is refused and the buffer stays as it was; once the user
// approves, the implementing turn edits.
func TestPlanModeRefusesWrites(t *testing.T) {
	ans := &answering{pick: func(id string) bool { return id == "implement:auto" }}
	e := start(t, setup{backend: "app-server", fs: true, mode: "auto", permission: ans.answer})
	e.setPlanMode(true)
	target := filepath.Join(e.cwd, "planned.txt")
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "call_plan_w", "write_text_file", map[string]any{"path": target, "content": "written while planning\n"})),
		mockapi.Reply(proposedPlan()),
		mockapi.Reply(acpCall(t, "call_impl_w", "write_text_file", map[string]any{"path": target, "content": "implemented\n"})),
		mockapi.Reply(mockapi.Message("Implemented.")),
	)
	e.mustPrompt("plan a file")
	reqs := e.mock.Requests()
	if len(reqs) != 4 {
		t.Fatalf("model requests = %d, want 4 (write, plan, write, done)", len(reqs))
	}
	out, ok := reqs[1].FunctionCallOutput("call_plan_w")
	if !ok || !strings.Contains(out, "plan mode") {
		t.Errorf("the plan turn's write was not refused as a plan-mode write: %q", out)
	}
	if asked := ans.requests(); len(asked) != 1 || asked[0].ToolCall.Kind == nil || *asked[0].ToolCall.Kind != acpsdk.ToolKindSwitchMode {
		t.Errorf("permission requests = %d, want only the switch question", len(asked))
	}
	if out, ok := reqs[3].FunctionCallOutput("call_impl_w"); !ok || strings.Contains(out, "Permission denied") {
		t.Errorf("the implementing turn's write: %q", out)
	}
	if got, _ := e.editor.Buffer(target); got != "implemented\n" {
		t.Errorf("planned.txt in the editor = %q, want only the implementing turn's write", got)
	}
}

// TestPlanModeUserInput: codex's question (request_user_input) reaches the
// user and the answer reaches codex. To an editor without elicitation it is
// a permission question with codex's options; to one declaring form
// elicitation an elicitation/create form of the session, which also takes
// an answer of the user's own. Declined, codex reads it unanswered and the
// turn goes on. (A question without options never reaches the agent: codex
// 0.169 fails such a call itself, "request_user_input requires non-empty
// options for every question".)
func TestPlanModeUserInput(t *testing.T) {
	args, err := json.Marshal(map[string]any{"questions": []any{map[string]any{
		"id": "lang", "header": "Language", "question": "Which language should the greeting be in?",
		"options": []any{
			map[string]any{"label": "English", "description": "Hello"},
			map[string]any{"label": "French", "description": "Bonjour"},
		},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		pick   string                                    // the permission option chosen (no elicitation)
		form   *acpsdk.UnstableCreateElicitationResponse // the editor's answer to elicitation/create; nil: no elicitation
		answer string                                    // in codex's tool output; "": none
	}{
		{name: "answered", pick: "answer-1", answer: "French"},
		{name: "declined", pick: "decline"},
		{name: "elicitation answered", form: acpsdk.Ptr(fakeeditor.Accept(map[string]any{"lang": "French"})), answer: "French"},
		{name: "elicitation declined", form: acpsdk.Ptr(fakeeditor.Decline())},
		// Codex marks its questions isOther: the form has a free-text
		// field besides the choice, which a permission question cannot offer.
		{name: "elicitation own answer", form: acpsdk.Ptr(fakeeditor.Accept(map[string]any{"lang_other": "Klingon"})), answer: "Klingon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ans := &answering{pick: func(id string) bool { return id == tc.pick }}
			s := setup{backend: "app-server", fs: true, permission: ans.answer}
			if tc.form != nil {
				s.elicitation = func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
					return *tc.form, nil
				}
			}
			e := start(t, s)
			e.setPlanMode(true)
			e.mock.Enqueue(
				mockapi.Reply(mockapi.FunctionCall("call_ask", "request_user_input", string(args))),
				mockapi.Reply(mockapi.Message("Noted.")),
			)
			if r := e.mustPrompt("greet"); r.StopReason != acpsdk.StopReasonEndTurn {
				t.Errorf("stopReason = %q", r.StopReason)
			}
			asked, forms := ans.requests(), elicitations(e)
			if tc.form != nil {
				if len(asked) != 0 || len(forms) != 1 {
					t.Fatalf("permission requests = %d, elicitations = %d; want 0 and 1", len(asked), len(forms))
				}
				var p struct {
					SessionID string `json:"sessionId"`
					Mode      string `json:"mode"`
				}
				if err := json.Unmarshal(forms[0], &p); err != nil || p.SessionID != string(e.session) || p.Mode != "form" {
					t.Errorf("elicitation/create params = %s", forms[0])
				}
				if !strings.Contains(string(forms[0]), `"lang":{"type":"string","title":"Language","oneOf":[{"const":"English"`) ||
					!strings.Contains(string(forms[0]), `"lang_other":{"type":"string"`) {
					t.Errorf("the form does not ask codex's question: %s", forms[0])
				}
			} else {
				if len(asked) != 1 || len(forms) != 0 {
					t.Fatalf("permission requests = %d, elicitations = %d; want 1 and 0", len(asked), len(forms))
				}
				var names []string
				for _, o := range asked[0].Options {
					names = append(names, o.Name)
				}
				if len(names) != 3 || !strings.HasPrefix(names[0], "English") || !strings.HasPrefix(names[1], "French") {
					t.Errorf("options = %q", names)
				}
			}
			out := toolOutput(t, e, "call_ask")
			t.Logf("request_user_input output: %s", out)
			if tc.answer != "" && !strings.Contains(out, tc.answer) {
				t.Errorf("codex did not get the answer %q: %s", tc.answer, out)
			}
			if tc.answer == "" && (strings.Contains(out, "French") || strings.Contains(out, "English")) {
				t.Errorf("a declined question was answered: %s", out)
			}
		})
	}
}

// elicitations are the params of the agent's elicitation/create requests.
func elicitations(e *env) []json.RawMessage {
	var out []json.RawMessage
	for _, raw := range e.editor.Raw() {
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Method == "elicitation/create" {
			out = append(out, m.Params)
		}
	}
	return out
}
