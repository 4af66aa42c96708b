package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// convert runs notifications (method, params pairs) through c and returns
// all events; any error fails the test.
func convert(t *testing.T, c *AppServer, pairs ...string) []Event {
	t.Helper()
	if len(pairs)%2 != 0 {
		t.Fatal("convert: odd number of arguments")
	}
	var all []Event
	for i := 0; i < len(pairs); i += 2 {
		evs, err := c.Convert(pairs[i], json.RawMessage(pairs[i+1]))
		if err != nil {
			t.Fatalf("Convert(%s, %s): %v", pairs[i], pairs[i+1], err)
		}
		all = append(all, evs...)
	}
	return all
}

func eventsJSON(t *testing.T, evs []Event) string {
	t.Helper()
	if len(evs) == 0 {
		return "[]"
	}
	b, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// item notification params for a thread item given as JSON.
func itemParams(item string) string {
	return `{"threadId":"th","turnId":"tu","startedAtMs":1,"completedAtMs":2,"item":` + item + `}`
}

func TestAppServerConvert(t *testing.T) {
	cases := []struct {
		name, method, params string
		want                 string // JSON of the events
	}{
		{"thread started", "thread/started", `{"thread":{"id":"th-1","turns":[],"status":{"type":"idle"}}}`,
			`[{"type":"thread.started","thread_id":"th-1"}]`},
		{"turn started", "turn/started", `{"threadId":"th","turn":{"id":"tu","items":[],"status":"inProgress"}}`,
			`[{"type":"turn.started"}]`},

		{"agent message started", "item/started", itemParams(`{"type":"agentMessage","id":"m1","text":"","phase":null}`),
			`[{"type":"item.started","item":{"id":"m1","type":"agent_message"}}]`},
		{"agent message completed", "item/completed", itemParams(`{"type":"agentMessage","id":"m1","text":"Hi."}`),
			`[{"type":"item.completed","item":{"id":"m1","type":"agent_message","text":"Hi."}}]`},
		{"proposed plan item is a message", "item/completed", itemParams(`{"type":"plan","id":"p1","text":"1. a\n2. b"}`),
			`[{"type":"item.completed","item":{"id":"p1","type":"agent_message","text":"1. a\n2. b"}}]`},
		{"reasoning summary parts", "item/completed", itemParams(`{"type":"reasoning","id":"r1","summary":["**A** one","","two"],"content":["raw"]}`),
			`[{"type":"item.completed","item":{"id":"r1","type":"reasoning","text":"**A** one\n\ntwo"}}]`},
		{"reasoning raw content without summary", "item/completed", itemParams(`{"type":"reasoning","id":"r1","summary":[],"content":["x","y"]}`),
			`[{"type":"item.completed","item":{"id":"r1","type":"reasoning","text":"x\n\ny"}}]`},
		{"reasoning without text", "item/completed", itemParams(`{"type":"reasoning","id":"r1"}`),
			`[{"type":"item.completed","item":{"id":"r1","type":"reasoning"}}]`},

		{"command started", "item/started", itemParams(`{"type":"commandExecution","id":"c1","command":"/bin/bash -lc ls","cwd":"/w","status":"inProgress","commandActions":[],"aggregatedOutput":null,"exitCode":null,"processId":null}`),
			`[{"type":"item.started","item":{"id":"c1","type":"command_execution","command":"/bin/bash -lc ls","cwd":"/w","status":"in_progress"}}]`},
		{"command completed", "item/completed", itemParams(`{"type":"commandExecution","id":"c1","command":"ls","cwd":"/w","status":"completed","commandActions":[],"aggregatedOutput":"a\n","exitCode":0}`),
			`[{"type":"item.completed","item":{"id":"c1","type":"command_execution","command":"ls","cwd":"/w","aggregated_output":"a\n","exit_code":0,"status":"completed"}}]`},
		{"command failed", "item/completed", itemParams(`{"type":"commandExecution","id":"c1","command":"false","cwd":"/w","status":"failed","commandActions":[],"aggregatedOutput":"","exitCode":1}`),
			`[{"type":"item.completed","item":{"id":"c1","type":"command_execution","command":"false","cwd":"/w","exit_code":1,"status":"failed"}}]`},
		{"command declined", "item/completed", itemParams(`{"type":"commandExecution","id":"c1","command":"rm x","cwd":"/w","status":"declined","commandActions":[]}`),
			`[{"type":"item.completed","item":{"id":"c1","type":"command_execution","command":"rm x","cwd":"/w","status":"declined"}}]`},

		{"file change", "item/completed", itemParams(`{"type":"fileChange","id":"f1","status":"completed","changes":[
			{"path":"/w/a","kind":{"type":"add"},"diff":"new\n"},
			{"path":"/w/b","kind":{"type":"update","move_path":"/w/c"},"diff":"@@ -1 +1 @@\n-x\n+y\n"},
			{"path":"/w/d","kind":{"type":"delete"},"diff":"old\n"}]}`),
			`[{"type":"item.completed","item":{"id":"f1","type":"file_change","status":"completed","changes":[` +
				`{"path":"/w/a","kind":"add","diff":"new\n"},{"path":"/w/b","kind":"update","diff":"@@ -1 +1 @@\n-x\n+y\n"},{"path":"/w/d","kind":"delete","diff":"old\n"}]}}]`},
		{"file change declined", "item/completed", itemParams(`{"type":"fileChange","id":"f1","status":"declined","changes":[]}`),
			`[{"type":"item.completed","item":{"id":"f1","type":"file_change","status":"declined"}}]`},
		{"file change in progress", "item/started", itemParams(`{"type":"fileChange","id":"f1","status":"inProgress","changes":[{"path":"/w/a","kind":{"type":"add"},"diff":""}]}`),
			`[{"type":"item.started","item":{"id":"f1","type":"file_change","status":"in_progress","changes":[{"path":"/w/a","kind":"add"}]}}]`},

		{"mcp call started", "item/started", itemParams(`{"type":"mcpToolCall","id":"x1","server":"docs","tool":"find","status":"inProgress","arguments":{"q":1},"result":null,"error":null}`),
			`[{"type":"item.started","item":{"id":"x1","type":"mcp_tool_call","status":"in_progress","server":"docs","tool":"find","arguments":{"q":1}}}]`},
		{"mcp call result", "item/completed", itemParams(`{"type":"mcpToolCall","id":"x1","server":"docs","tool":"find","status":"completed","arguments":null,"result":{"content":[{"type":"text","text":"ok"}],"structuredContent":{"n":1},"_meta":null},"error":null}`),
			`[{"type":"item.completed","item":{"id":"x1","type":"mcp_tool_call","status":"completed","server":"docs","tool":"find","arguments":null,"result":{"content":[{"type":"text","text":"ok"}],"structured_content":{"n":1}}}}]`},
		{"mcp call result without content", "item/completed", itemParams(`{"type":"mcpToolCall","id":"x1","server":"docs","tool":"find","status":"completed","arguments":{},"result":{"structuredContent":null}}`),
			`[{"type":"item.completed","item":{"id":"x1","type":"mcp_tool_call","status":"completed","server":"docs","tool":"find","arguments":{},"result":{"content":[]}}}]`},
		{"mcp call error", "item/completed", itemParams(`{"type":"mcpToolCall","id":"x1","server":"docs","tool":"find","status":"failed","arguments":{},"error":{"message":"timed out"}}`),
			`[{"type":"item.completed","item":{"id":"x1","type":"mcp_tool_call","status":"failed","server":"docs","tool":"find","arguments":{},"error":{"message":"timed out"}}}]`},

		{"web search", "item/completed", itemParams(`{"type":"webSearch","id":"w1","query":"go","action":{"type":"search","query":"go","queries":["go","golang"]}}`),
			`[{"type":"item.completed","item":{"id":"w1","type":"web_search","query":"go","action":{"type":"search","query":"go","queries":["go","golang"]}}}]`},
		{"web search open page", "item/started", itemParams(`{"type":"webSearch","id":"w1","query":"","action":{"type":"openPage","url":"https://x"}}`),
			`[{"type":"item.started","item":{"id":"w1","type":"web_search","action":{"type":"open_page","url":"https://x"}}}]`},
		{"web search find in page", "item/completed", itemParams(`{"type":"webSearch","id":"w1","query":"","action":{"type":"findInPage","url":"https://x","pattern":"p"}}`),
			`[{"type":"item.completed","item":{"id":"w1","type":"web_search","action":{"type":"find_in_page","url":"https://x","pattern":"p"}}}]`},
		{"web search without action", "item/completed", itemParams(`{"type":"webSearch","id":"w1","query":"q","action":null}`),
			`[{"type":"item.completed","item":{"id":"w1","type":"web_search","query":"q"}}]`},

		{"user message", "item/completed", itemParams(`{"type":"userMessage","id":"u1","content":[{"type":"text","text":"hi","text_elements":[]}]}`), `[]`},
		{"hook prompt", "item/completed", itemParams(`{"type":"hookPrompt","id":"h1","fragments":[]}`), `[]`},
		{"dynamic tool call", "item/started", itemParams(`{"type":"dynamicToolCall","id":"d1","tool":"t","arguments":{},"status":"inProgress"}`), `[]`},
		{"collab agent call", "item/started", itemParams(`{"type":"collabAgentToolCall","id":"a1","tool":"spawnAgent","status":"inProgress","agentsStates":{},"receiverThreadIds":[],"senderThreadId":"th"}`),
			`[{"type":"item.started","item":{"id":"a1","type":"collab_tool_call","status":"in_progress","tool":"spawn_agent","sender_thread_id":"th"}}]`},
		{"collab agent call result", "item/completed", itemParams(`{"type":"collabAgentToolCall","id":"a2","tool":"wait","status":"completed","prompt":null,"model":null,"agentsStates":{"c1":{"status":"completed","message":"done: 3"},"c2":{"status":"pendingInit","message":null}},"receiverThreadIds":["c1","c2"],"senderThreadId":"th"}`),
			`[{"type":"item.completed","item":{"id":"a2","type":"collab_tool_call","status":"completed","tool":"wait","sender_thread_id":"th","receiver_thread_ids":["c1","c2"],"agents_states":{"c1":{"status":"completed","message":"done: 3"},"c2":{"status":"pending_init"}}}}]`},
		{"collab spawn with task", "item/completed", itemParams(`{"type":"collabAgentToolCall","id":"a3","tool":"spawnAgent","status":"interrupted","prompt":"count files","model":"gpt-5.5","reasoningEffort":"low","agentsStates":{},"receiverThreadIds":[],"senderThreadId":"th"}`),
			`[{"type":"item.completed","item":{"id":"a3","type":"collab_tool_call","status":"interrupted","tool":"spawn_agent","prompt":"count files","model":"gpt-5.5","sender_thread_id":"th"}}]`},
		{"sub-agent activity", "item/completed", itemParams(`{"type":"subAgentActivity","id":"s1","kind":"interacted","agentThreadId":"c1","agentPath":"/root/a","model":null}`),
			`[{"type":"item.completed","item":{"id":"s1","type":"sub_agent_activity","activity":"interacted","agent_thread_id":"c1","agent_path":"/root/a"}}]`},
		{"image view", "item/completed", itemParams(`{"type":"imageView","id":"i1","path":"/w/x.png"}`),
			`[{"type":"item.completed","item":{"id":"i1","type":"image_view","path":"/w/x.png"}}]`},
		{"image generated", "item/completed", itemParams(`{"type":"imageGeneration","id":"g1","status":"completed","revisedPrompt":"a cat","result":"iVBORw0K","savedPath":"/h/g1.png"}`),
			`[{"type":"item.completed","item":{"id":"g1","type":"image_generation","status":"completed","path":"/h/g1.png","revised_prompt":"a cat","image_data":"iVBORw0K"}}]`},
		{"image generation stored as a file id", "item/completed", itemParams(`{"type":"imageGeneration","id":"g2","status":"completed","fileId":"file_1","revisedPrompt":null,"savedPath":null}`),
			`[{"type":"item.completed","item":{"id":"g2","type":"image_generation","status":"completed"}}]`},
		{"image generation failed", "item/completed", itemParams(`{"type":"imageGeneration","id":"g3","status":"failed","result":"","failure":{"type":"usageLimitExceeded","limitId":"x"}}`),
			`[{"type":"item.completed","item":{"id":"g3","type":"image_generation","status":"failed","failure":"usageLimitExceeded"}}]`},
		{"context compaction", "item/completed", itemParams(`{"type":"contextCompaction","id":"k1"}`), `[{"type":"item.completed","item":{"id":"k1","type":"context_compaction","status":"completed"}}]`},
		{"context compaction starts", "item/started", itemParams(`{"type":"contextCompaction","id":"k1"}`), `[{"type":"item.started","item":{"id":"k1","type":"context_compaction","status":"in_progress"}}]`},
		{"review findings", "item/completed", itemParams(`{"type":"exitedReviewMode","id":"r1","review":"Looks fine."}`), `[{"type":"item.completed","item":{"id":"r1","type":"agent_message","text":"Looks fine."}}]`},
		{"goal tokens counted", "thread/goal/updated", `{"threadId":"th","turnId":"tu","goal":{"objective":"ship","status":"active","tokensUsed":90}}`, `[]`},
		{"goal complete", "thread/goal/updated", `{"threadId":"th","turnId":"tu","goal":{"objective":"ship","status":"complete","tokensUsed":90}}`,
			`[{"type":"item.completed","item":{"id":"goal_1","type":"agent_message","text":"Goal complete: ship"}}]`},
		{"goal out of budget", "thread/goal/updated", `{"threadId":"th","goal":{"objective":"ship","status":"budgetLimited"}}`,
			`[{"type":"item.completed","item":{"id":"goal_1","type":"agent_message","text":"Goal stopped: token budget used up: ship"}}]`},
		{"no goal cleared", "thread/goal/cleared", `{"threadId":"th"}`, `[]`},
		{"review entered", "item/completed", itemParams(`{"type":"enteredReviewMode","id":"r0","review":"current changes"}`), `[]`},
		{"future item type", "item/completed", itemParams(`{"type":"somethingNew","id":"n1","stuff":[1,2]}`), `[]`},

		{"message delta", "item/agentMessage/delta", `{"threadId":"th","turnId":"tu","itemId":"m1","delta":"He"}`,
			`[{"type":"item.delta","delta":{"item_id":"m1","kind":"message","text":"He"}}]`},
		{"empty message delta", "item/agentMessage/delta", `{"threadId":"th","turnId":"tu","itemId":"m1","delta":""}`, `[]`},
		{"output delta is text", "item/commandExecution/outputDelta", `{"threadId":"th","turnId":"tu","itemId":"c1","delta":"line\n"}`,
			`[{"type":"item.delta","delta":{"item_id":"c1","kind":"output","text":"line\n"}}]`},
		{"summary part added alone", "item/reasoning/summaryPartAdded", `{"threadId":"th","turnId":"tu","itemId":"r1","summaryIndex":1}`, `[]`},

		{"retry error is a warning", "error", `{"threadId":"th","turnId":"tu","willRetry":true,"error":{"message":"Reconnecting... 2/5","codexErrorInfo":"serverOverloaded","additionalDetails":"overloaded"}}`,
			`[{"type":"error","message":"Reconnecting... 2/5 (overloaded)"}]`},
		{"retry error without details", "error", `{"threadId":"th","turnId":"tu","willRetry":true,"error":{"message":"Reconnecting... 1/5","additionalDetails":null}}`,
			`[{"type":"error","message":"Reconnecting... 1/5"}]`},
		{"final error waits for turn/completed", "error", `{"threadId":"th","turnId":"tu","willRetry":false,"error":{"message":"bad"}}`, `[]`},
		{"warning", "warning", `{"threadId":null,"message":"careful"}`, `[{"type":"error","message":"careful"}]`},
		{"empty warning", "warning", `{"message":""}`, `[]`},
		{"model rerouted", "model/rerouted", `{"threadId":"th","turnId":"tu","fromModel":"a","toModel":"b","reason":"highRiskCyberActivity"}`,
			`[{"type":"error","message":"model rerouted: a -> b (highRiskCyberActivity)"}]`},

		{"thread status", "thread/status/changed", `{"threadId":"th","status":{"type":"idle"}}`, `[]`},
		{"rate limits", "account/rateLimits/updated", `{"rateLimits":{}}`, `[]`},
		{"config warning", "configWarning", `{"summary":"no bubblewrap","details":null}`, `[]`},
		{"turn diff", "turn/diff/updated", `{"threadId":"th","turnId":"tu","diff":"..."}`, `[]`},
		{"plan delta is message text", "item/plan/delta", `{"threadId":"th","turnId":"tu","itemId":"p1","delta":"1."}`,
			`[{"type":"item.delta","delta":{"item_id":"p1","kind":"message","text":"1."}}]`},
		{"unknown method with garbage", "no/such/method", `not json`, `[]`},
		{"usage alone", "thread/tokenUsage/updated", `{"threadId":"th","turnId":"tu","tokenUsage":{"total":{"totalTokens":1,"inputTokens":1,"cachedInputTokens":0,"outputTokens":0,"reasoningOutputTokens":0},"last":{"totalTokens":1,"inputTokens":1,"cachedInputTokens":0,"outputTokens":0,"reasoningOutputTokens":0}}}`, `[]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := eventsJSON(t, convert(t, NewAppServer(), tc.method, tc.params))
			if got != compactJSON(t, tc.want) {
				t.Errorf("got  %s\nwant %s", got, compactJSON(t, tc.want))
			}
		})
	}
}

func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad want %s: %v", s, err)
	}
	if a, ok := v.([]any); ok && len(a) == 0 {
		return "[]"
	}
	var evs []Event
	if err := json.Unmarshal([]byte(s), &evs); err != nil {
		t.Fatalf("bad want %s: %v", s, err)
	}
	return eventsJSON(t, evs)
}

func TestAppServerConvertErrors(t *testing.T) {
	methods := []string{
		"thread/started", "turn/started", "turn/completed", "turn/plan/updated", "thread/tokenUsage/updated",
		"item/started", "item/completed", "item/agentMessage/delta", "item/plan/delta",
		"item/reasoning/summaryPartAdded", "item/reasoning/summaryTextDelta", "item/reasoning/textDelta", "item/commandExecution/outputDelta",
		"error", "warning", "model/rerouted",
	}
	for _, m := range methods {
		for _, params := range []string{``, `null`, `[]`, `"x"`, `{`, `{"threadId": 5, "item": 5, "itemId": 5, "turn": 5, "tokenUsage": 5, "plan": 5, "message": 5, "error": 5, "fromModel": 5}`} {
			evs, err := NewAppServer().Convert(m, json.RawMessage(params))
			if err == nil || evs != nil {
				t.Errorf("Convert(%s, %s) = %v, %v; want an error", m, params, evs, err)
			} else if !strings.Contains(err.Error(), m) {
				t.Errorf("error %q does not name the method", err)
			}
		}
	}
	// Required parts missing.
	for _, tc := range [][2]string{
		{"item/reasoning/summaryPartAdded", `{"summaryIndex":1}`},
		{"thread/started", `{}`},
		{"thread/started", `{"thread":{"id":""}}`},
		{"turn/started", `{"threadId":"th"}`},
		{"turn/completed", `{"threadId":"th","turn":{"id":"tu"}}`},
		{"thread/tokenUsage/updated", `{"tokenUsage":{"last":{}}}`},
		{"item/started", `{"item":{"id":"x"}}`},
		{"item/completed", `{}`},
		{"item/agentMessage/delta", `{"delta":"x"}`},
		{"item/plan/delta", `{"delta":"x"}`},
		{"item/reasoning/summaryTextDelta", `{"delta":"x","summaryIndex":0}`},
		{"item/commandExecution/outputDelta", `{"delta":"x"}`},
		{"error", `{"willRetry":true}`},
	} {
		if _, err := NewAppServer().Convert(tc[0], json.RawMessage(tc[1])); err == nil {
			t.Errorf("Convert(%s, %s): no error", tc[0], tc[1])
		}
	}
}

const (
	turnStarted = `{"threadId":"th","turn":{"id":"tu-1","items":[],"status":"inProgress","error":null}}`
	usageParams = `{"threadId":"th","turnId":"tu-1","tokenUsage":{"total":{"totalTokens":1200,"inputTokens":1000,"cachedInputTokens":300,"cacheWriteInputTokens":40,"outputTokens":200,"reasoningOutputTokens":50},"last":{"totalTokens":700,"inputTokens":600,"cachedInputTokens":100,"cacheWriteInputTokens":0,"outputTokens":100,"reasoningOutputTokens":20},"modelContextWindow":258400}}`
)

func turnCompleted(status, errJSON string) string {
	return `{"threadId":"th","turn":{"id":"tu-1","items":[],"status":"` + status + `","error":` + errJSON + `}}`
}

func TestAppServerTurnEnd(t *testing.T) {
	total := `"usage":{"input_tokens":1000,"cached_input_tokens":300,"cache_write_input_tokens":40,"output_tokens":200,"reasoning_output_tokens":50},` +
		`"last_usage":{"input_tokens":600,"cached_input_tokens":100,"cache_write_input_tokens":0,"output_tokens":100,"reasoning_output_tokens":20}`
	cases := []struct {
		name  string
		pairs []string
		want  string
	}{
		{"completed with usage", []string{"turn/started", turnStarted, "thread/tokenUsage/updated", usageParams, "turn/completed", turnCompleted("completed", "null")},
			`[{"type":"turn.started"},{"type":"turn.completed",` + total + `}]`},
		{"completed without usage this turn", []string{"thread/tokenUsage/updated", usageParams, "turn/started", turnStarted, "turn/completed", turnCompleted("completed", "null")},
			`[{"type":"turn.started"},{"type":"turn.completed"}]`},
		{"usage without cacheWriteInputTokens", []string{"turn/started", turnStarted,
			"thread/tokenUsage/updated", `{"tokenUsage":{"total":{"totalTokens":3,"inputTokens":2,"cachedInputTokens":1,"outputTokens":1,"reasoningOutputTokens":0},"last":{"totalTokens":3,"inputTokens":2,"cachedInputTokens":1,"outputTokens":1,"reasoningOutputTokens":0}}}`,
			"turn/completed", turnCompleted("completed", "null")},
			`[{"type":"turn.started"},{"type":"turn.completed","usage":{"input_tokens":2,"cached_input_tokens":1,"cache_write_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0},"last_usage":{"input_tokens":2,"cached_input_tokens":1,"cache_write_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}]`},
		{"failed with details", []string{"turn/started", turnStarted, "turn/completed", turnCompleted("failed", `{"message":"bad request","codexErrorInfo":"badRequest","additionalDetails":"HTTP 400"}`)},
			`[{"type":"turn.started"},{"type":"turn.failed","error":{"message":"bad request (HTTP 400)","codex_error_info":"badRequest"}}]`},
		{"failed after error notification", []string{"turn/started", turnStarted,
			"error", `{"threadId":"th","turnId":"tu-1","willRetry":false,"error":{"message":"quota","additionalDetails":"try later"}}`,
			"thread/tokenUsage/updated", usageParams, "turn/completed", turnCompleted("failed", "null")},
			`[{"type":"turn.started"},{"type":"turn.failed","error":{"message":"quota (try later)"},` + total + `}]`},
		{"failed without any message", []string{"turn/started", turnStarted, "turn/completed", turnCompleted("failed", `{"message":""}`)},
			`[{"type":"turn.started"},{"type":"turn.failed","error":{"message":""}}]`},
		{"an earlier turn's error does not leak", []string{"turn/started", turnStarted,
			"error", `{"threadId":"th","turnId":"tu-1","willRetry":false,"error":{"message":"old"}}`,
			"turn/started", turnStarted, "turn/completed", turnCompleted("failed", "null")},
			`[{"type":"turn.started"},{"type":"turn.started"},{"type":"turn.failed","error":{"message":""}}]`},
		{"interrupted", []string{"turn/started", turnStarted, "thread/tokenUsage/updated", usageParams, "turn/completed", turnCompleted("interrupted", "null")},
			`[{"type":"turn.started"},{"type":"turn.interrupted",` + total + `}]`},
		{"in progress is no end", []string{"turn/started", turnStarted, "turn/completed", turnCompleted("inProgress", "null")},
			`[{"type":"turn.started"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := eventsJSON(t, convert(t, NewAppServer(), tc.pairs...))
			if want := compactJSON(t, tc.want); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestAppServerPlan(t *testing.T) {
	c := NewAppServer()
	plan := func(statuses ...string) string {
		var steps []string
		for i, s := range statuses {
			steps = append(steps, fmt.Sprintf(`{"step":"s%d","status":"%s"}`, i, s))
		}
		return `{"threadId":"th","turnId":"tu-1","explanation":null,"plan":[` + strings.Join(steps, ",") + `]}`
	}
	got := eventsJSON(t, convert(t, c,
		"turn/started", turnStarted,
		"turn/plan/updated", plan("inProgress", "pending"),
		"turn/plan/updated", plan("completed", "inProgress"),
		"turn/completed", turnCompleted("completed", "null"),
		"turn/started", strings.ReplaceAll(turnStarted, "tu-1", "tu-2"),
		"turn/plan/updated", plan("pending"),
		"turn/completed", turnCompleted("interrupted", "null"),
	))
	want := compactJSON(t, `[{"type":"turn.started"},
		{"type":"item.started","item":{"id":"plan-tu-1","type":"todo_list","items":[{"text":"s0","completed":false},{"text":"s1","completed":false}]}},
		{"type":"item.updated","item":{"id":"plan-tu-1","type":"todo_list","items":[{"text":"s0","completed":true},{"text":"s1","completed":false}]}},
		{"type":"item.completed","item":{"id":"plan-tu-1","type":"todo_list","items":[{"text":"s0","completed":true},{"text":"s1","completed":false}]}},
		{"type":"turn.completed"},
		{"type":"turn.started"},
		{"type":"item.started","item":{"id":"plan-tu-2","type":"todo_list","items":[{"text":"s0","completed":false}]}},
		{"type":"item.completed","item":{"id":"plan-tu-2","type":"todo_list","items":[{"text":"s0","completed":false}]}},
		{"type":"turn.interrupted"}]`)
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Without turn/started, the notification's turn id names the plan.
	evs := convert(t, NewAppServer(), "turn/plan/updated", plan("pending"))
	if len(evs) != 1 || evs[0].Item.ID != "plan-tu-1" {
		t.Errorf("plan without turn/started: %s", eventsJSON(t, evs))
	}
}

// summaryDelta and rawDelta are reasoning delta params.
func summaryDelta(item string, index int, delta string) string {
	return fmt.Sprintf(`{"threadId":"th","turnId":"tu","itemId":%q,"delta":%q,"summaryIndex":%d}`, item, delta, index)
}

func rawDelta(item string, index int, delta string) string {
	return fmt.Sprintf(`{"threadId":"th","turnId":"tu","itemId":%q,"delta":%q,"contentIndex":%d}`, item, delta, index)
}

// streamedText concatenates the delta texts of events.
func deltaText(evs []Event, kind string) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Type == TypeItemDelta && ev.Delta.Kind == kind {
			b.WriteString(ev.Delta.Text)
		}
	}
	return b.String()
}

func completedText(t *testing.T, evs []Event) string {
	t.Helper()
	last := evs[len(evs)-1]
	if last.Type != TypeItemCompleted {
		t.Fatalf("last event %+v, want item.completed", last)
	}
	return last.Item.Text
}

// The streamed reasoning text equals the completed item's text: parts are
// separated by a blank line, by the first delta of the next part (an empty
// part adds nothing).
func TestAppServerReasoningStream(t *testing.T) {
	c := NewAppServer()
	evs := convert(t, c,
		"item/started", itemParams(`{"type":"reasoning","id":"r1","summary":[],"content":[]}`),
		"item/reasoning/summaryPartAdded", `{"itemId":"r1","summaryIndex":0}`,
		"item/reasoning/summaryTextDelta", summaryDelta("r1", 0, "**One**"),
		"item/reasoning/summaryTextDelta", summaryDelta("r1", 0, " first"),
		"item/reasoning/summaryPartAdded", `{"itemId":"r1","summaryIndex":1}`,
		"item/reasoning/summaryPartAdded", `{"itemId":"r1","summaryIndex":2}`,
		"item/reasoning/summaryTextDelta", summaryDelta("r1", 2, "third"),
		"item/reasoning/summaryTextDelta", summaryDelta("r1", 2, ""),
		"item/reasoning/summaryTextDelta", summaryDelta("r1", 3, "fourth"),
		"item/reasoning/textDelta", rawDelta("r1", 0, "raw text is not streamed once the summary is"),
		"item/completed", itemParams(`{"type":"reasoning","id":"r1","summary":["**One** first","","third","fourth"],"content":["raw text is not streamed once the summary is"]}`),
	)
	streamed, final := deltaText(evs, DeltaReasoning), completedText(t, evs)
	if want := "**One** first\n\nthird\n\nfourth"; streamed != want || final != want {
		t.Errorf("streamed %q, completed %q, want both %q", streamed, final, want)
	}

	// Raw content streams when it comes first; the completed text is the
	// content then, even with a summary.
	evs = convert(t, c,
		"item/reasoning/textDelta", rawDelta("r2", 0, "a"),
		"item/reasoning/textDelta", rawDelta("r2", 1, "b"),
		"item/reasoning/summaryTextDelta", summaryDelta("r2", 0, "S"),
		"item/completed", itemParams(`{"type":"reasoning","id":"r2","summary":["S"],"content":["a","b"]}`),
	)
	streamed, final = deltaText(evs, DeltaReasoning), completedText(t, evs)
	if streamed != "a\n\nb" || final != "a\n\nb" {
		t.Errorf("raw stream: streamed %q, completed %q", streamed, final)
	}

	// The state of a completed item is gone: the same id streams anew.
	evs = convert(t, c, "item/reasoning/summaryTextDelta", summaryDelta("r1", 5, "again"))
	if got := deltaText(evs, DeltaReasoning); got != "again" {
		t.Errorf("after completion: %q", got)
	}
	// A new turn forgets streams.
	convert(t, c, "item/reasoning/summaryTextDelta", summaryDelta("r9", 0, "x"), "turn/started", turnStarted)
	evs = convert(t, c, "item/reasoning/summaryTextDelta", summaryDelta("r9", 1, "y"))
	if got := deltaText(evs, DeltaReasoning); got != "y" {
		t.Errorf("after a new turn: %q", got)
	}
}

// translateAll converts and translates notifications, checking every update.
func translateAll(t *testing.T, c *AppServer, tr *Translator, pairs ...string) []acpsdk.SessionUpdate {
	t.Helper()
	var all []acpsdk.SessionUpdate
	for _, ev := range convert(t, c, pairs...) {
		for _, u := range tr.Translate(ev) {
			checkUpdate(t, u)
			all = append(all, u)
		}
	}
	return all
}

// texts renders message, thought and user chunks as "m:text" / "t:text" /
// "u:text".
func texts(us []acpsdk.SessionUpdate) []string {
	var out []string
	for _, u := range us {
		switch {
		case u.UserMessageChunk != nil:
			out = append(out, "u:"+u.UserMessageChunk.Content.Text.Text)
		case u.AgentMessageChunk != nil:
			out = append(out, "m:"+u.AgentMessageChunk.Content.Text.Text)
		case u.AgentThoughtChunk != nil:
			out = append(out, "t:"+u.AgentThoughtChunk.Content.Text.Text)
		default:
			out = append(out, "other")
		}
	}
	return out
}

func msgDelta(item, text string) string {
	return fmt.Sprintf(`{"threadId":"th","turnId":"tu","itemId":%q,"delta":%q}`, item, text)
}

func msgDone(item, text string) string {
	return itemParams(fmt.Sprintf(`{"type":"agentMessage","id":%q,"text":%q}`, item, text))
}

func TestTranslateStreamedText(t *testing.T) {
	cases := []struct {
		name  string
		pairs []string
		want  []string
	}{
		{"completed text equals streamed: nothing more", []string{
			"item/agentMessage/delta", msgDelta("m1", "Hel"),
			"item/agentMessage/delta", msgDelta("m1", "lo"),
			"item/completed", msgDone("m1", "Hello"),
		}, []string{"m:Hel", "m:lo"}},
		{"completed text extends streamed: the rest", []string{
			"item/agentMessage/delta", msgDelta("m1", "Hel"),
			"item/completed", msgDone("m1", "Hello!"),
		}, []string{"m:Hel", "m:lo!"}},
		{"completed text differs: nothing", []string{
			"item/agentMessage/delta", msgDelta("m1", "Hel"),
			"item/completed", msgDone("m1", "Bye"),
		}, []string{"m:Hel"}},
		{"completed empty after streaming: nothing", []string{
			"item/agentMessage/delta", msgDelta("m1", "Hel"),
			"item/completed", msgDone("m1", ""),
		}, []string{"m:Hel"}},
		{"paragraph break between items, not between deltas", []string{
			"item/agentMessage/delta", msgDelta("m1", "One"),
			"item/agentMessage/delta", msgDelta("m1", " two"),
			"item/completed", msgDone("m1", "One two"),
			"item/agentMessage/delta", msgDelta("m2", "Three"),
			"item/agentMessage/delta", msgDelta("m2", " four"),
			"item/completed", msgDone("m2", "Three four"),
			"item/completed", msgDone("m3", "Five"),
		}, []string{"m:One", "m: two", "m:\n\nThree", "m: four", "m:\n\nFive"}},
		{"thought then message: no break across kinds", []string{
			"item/reasoning/summaryTextDelta", summaryDelta("r1", 0, "hmm"),
			"item/completed", itemParams(`{"type":"reasoning","id":"r1","summary":["hmm"]}`),
			"item/agentMessage/delta", msgDelta("m1", "Yes"),
			"item/completed", msgDone("m1", "Yes"),
			"item/reasoning/summaryTextDelta", summaryDelta("r2", 0, "more"),
		}, []string{"t:hmm", "m:Yes", "t:more"}},
		{"late and empty deltas are ignored", []string{
			"item/completed", msgDone("m1", "Whole"),
			"item/agentMessage/delta", msgDelta("m1", "late"),
			"item/agentMessage/delta", msgDelta("m2", "A"),
			"item/completed", msgDone("m2", "A"),
			"item/agentMessage/delta", msgDelta("m2", "late"),
		}, []string{"m:Whole", "m:\n\nA"}},
		{"proposed plan streams after the message, once", []string{
			"item/agentMessage/delta", msgDelta("m1", "Here is the plan."),
			"item/started", itemParams(`{"type":"plan","id":"tu-plan","text":""}`),
			"item/plan/delta", msgDelta("tu-plan", "1. Cre"),
			"item/plan/delta", msgDelta("tu-plan", "ate it.\n"),
			"item/completed", itemParams(`{"type":"plan","id":"tu-plan","text":"1. Create it.\n"}`),
			"item/completed", msgDone("m1", "Here is the plan."),
		}, []string{"m:Here is the plan.", "m:\n\n1. Cre", "m:ate it.\n"}},
		{"second proposed plan block: the streamed text stands", []string{
			"item/plan/delta", msgDelta("tu-plan", "A\n"),
			"item/plan/delta", msgDelta("tu-plan", "B\n"),
			"item/completed", itemParams(`{"type":"plan","id":"tu-plan","text":"B\n"}`),
		}, []string{"m:A\n", "m:B\n"}},
		{"item started sends nothing", []string{
			"item/started", itemParams(`{"type":"agentMessage","id":"m1","text":""}`),
			"item/started", itemParams(`{"type":"reasoning","id":"r1","summary":[]}`),
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTranslator(Options{})
			tr.BeginTurn()
			got := texts(translateAll(t, NewAppServer(), tr, tc.pairs...))
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A delta event of one kind for an item streamed as another is ignored;
// so is an item.completed of another type.
func TestTranslateStreamKindMismatch(t *testing.T) {
	tr := NewTranslator(Options{})
	tr.BeginTurn()
	var got []acpsdk.SessionUpdate
	for _, ev := range []Event{
		{Type: TypeItemDelta, Delta: &Delta{ItemID: "x", Kind: DeltaMessage, Text: "msg"}},
		{Type: TypeItemDelta, Delta: &Delta{ItemID: "x", Kind: DeltaReasoning, Text: "thought"}},
		{Type: TypeItemDelta, Delta: &Delta{ItemID: "x", Kind: "unknown", Text: "?"}},
		{Type: TypeItemDelta},
		{Type: TypeItemCompleted, Item: &Item{ID: "x", Type: ItemReasoning, Text: "thought"}},
		{Type: TypeItemCompleted, Item: &Item{ID: "x", Type: ItemAgentMessage, Text: "msg!"}},
	} {
		got = append(got, tr.Translate(ev)...)
	}
	if s := strings.Join(texts(got), "|"); s != "m:msg|t:thought|m:!" {
		t.Errorf("got %q", s)
	}
}

func cmdItem(id, status, output, exit string) string {
	return itemParams(fmt.Sprintf(`{"type":"commandExecution","id":%q,"command":"/bin/bash -lc make","cwd":"/w","status":%q,"commandActions":[],"aggregatedOutput":%s,"exitCode":%s}`, id, status, output, exit))
}

func outDelta(id, text string) string {
	return fmt.Sprintf(`{"threadId":"th","turnId":"tu","itemId":%q,"delta":%q}`, id, text)
}

// contentText is the text of a tool call (update)'s only content block.
func contentText(t *testing.T, u acpsdk.SessionUpdate) string {
	t.Helper()
	texts := contentTexts(u)
	if len(texts) != 1 {
		t.Fatalf("update %+v has no single text content", u)
	}
	return texts[0]
}

// contentTexts is the text of each content block of an update's tool call.
func contentTexts(u acpsdk.SessionUpdate) []string {
	var content []acpsdk.ToolCallContent
	switch {
	case u.ToolCall != nil:
		content = u.ToolCall.Content
	case u.ToolCallUpdate != nil:
		content = u.ToolCallUpdate.Content
	}
	var out []string
	for _, c := range content {
		if c.Content != nil && c.Content.Content.Text != nil {
			out = append(out, c.Content.Content.Text.Text)
		}
	}
	return out
}

func TestTranslateOutputDeltas(t *testing.T) {
	c, tr := NewAppServer(), NewTranslator(Options{})
	tr.BeginTurn()
	us := translateAll(t, c, tr,
		"item/started", cmdItem("c1", "inProgress", "null", "null"),
		"item/commandExecution/outputDelta", outDelta("c1", "one\n"),
		"item/commandExecution/outputDelta", outDelta("c1", "two"),
		"item/commandExecution/outputDelta", outDelta("nope", "unknown item\n"),
	)
	// The second piece is too small for an update of its own (coalesced).
	if len(us) != 2 || us[0].ToolCall == nil {
		t.Fatalf("updates %+v", us)
	}
	if got := contentText(t, us[1]); got != "```\none\n```" {
		t.Errorf("first delta: %q", got)
	}
	if us[1].ToolCallUpdate.Status != nil || us[1].ToolCallUpdate.RawOutput != nil {
		t.Errorf("a delta update sends only content: %+v", us[1].ToolCallUpdate)
	}
	// The completion brings the whole output.
	us = translateAll(t, c, tr, "item/completed", cmdItem("c1", "completed", `"one\ntwo"`, "0"))
	if len(us) != 1 || us[0].ToolCallUpdate == nil || contentText(t, us[0]) != "```\none\ntwo\n```" ||
		us[0].ToolCallUpdate.Status == nil || *us[0].ToolCallUpdate.Status != acpsdk.ToolCallStatusCompleted {
		t.Errorf("completion: %+v", us)
	}
	// Deltas after completion, and for items that are not commands, are ignored.
	us = translateAll(t, c, tr,
		"item/commandExecution/outputDelta", outDelta("c1", "late\n"),
		"item/started", itemParams(`{"type":"fileChange","id":"f1","status":"inProgress","changes":[]}`),
		"item/commandExecution/outputDelta", outDelta("f1", "patch output\n"),
	)
	if len(us) != 1 || us[0].ToolCall == nil {
		t.Errorf("late/foreign deltas: %+v", us)
	}
}

func TestTranslateOutputDeltaCap(t *testing.T) {
	c, tr := NewAppServer(), NewTranslator(Options{MaxOutputBytes: 20})
	tr.BeginTurn()
	us := translateAll(t, c, tr,
		"item/started", cmdItem("c1", "inProgress", "null", "null"),
		"item/commandExecution/outputDelta", outDelta("c1", "0123456789"),
		"item/commandExecution/outputDelta", outDelta("c1", "abcdefghij"),
		"item/commandExecution/outputDelta", outDelta("c1", "KLMNOPQRST"),
		"item/commandExecution/outputDelta", outDelta("c1", "more"),
		"item/commandExecution/outputDelta", outDelta("c1", "and more"),
	)
	if len(us) != 3 {
		t.Fatalf("%d updates, want the tool call, the first piece and the cap (none after it): %+v", len(us), us)
	}
	if got := contentText(t, us[1]); got != "```\n0123456789\n```" {
		t.Errorf("first piece: %q", got)
	}
	want := "```\n" + limitText("0123456789abcdefghijKLMNOPQRST", 20) + "\n```"
	if got := contentText(t, us[2]); got != want {
		t.Errorf("past the cap: %q, want %q", got, want)
	}
	// The completed item brings the final (limited) output.
	full := strings.Repeat("x", 50)
	us = translateAll(t, c, tr, "item/completed", cmdItem("c1", "completed", `"`+full+`"`, "0"))
	if len(us) != 1 || contentText(t, us[0]) != fenced(limitText(full, 20)) {
		t.Errorf("completion: %+v", us)
	}
	// A single delta over the cap.
	tr.BeginTurn()
	us = translateAll(t, c, tr,
		"item/started", cmdItem("c2", "inProgress", "null", "null"),
		"item/commandExecution/outputDelta", outDelta("c2", full),
		"item/commandExecution/outputDelta", outDelta("c2", "x"),
	)
	if len(us) != 2 || contentText(t, us[1]) != fenced(limitText(full, 20)) {
		t.Errorf("one big delta: %+v", us)
	}
}

func TestTranslateInterruptedTurn(t *testing.T) {
	c := NewAppServer()
	tr := NewTranslator(Options{ContextWindow: 100000})
	tr.BeginTurn()
	us := translateAll(t, c, tr,
		"thread/started", `{"thread":{"id":"th"}}`,
		"turn/started", turnStarted,
		"item/started", cmdItem("c1", "inProgress", "null", "null"),
		"thread/tokenUsage/updated", usageParams,
		"turn/completed", turnCompleted("interrupted", "null"),
	)
	checkUsageUpdate(t, us, 700, 100000) // the last request: 600 in + 100 out
	out := tr.EndTurn()
	if !out.Interrupted || out.Completed || out.FailedMessage != "" || out.ThreadID != "th" {
		t.Errorf("outcome %+v", out)
	}
	if want := (Usage{InputTokens: 1000, CachedInputTokens: 300, CacheWriteInputTokens: 40, OutputTokens: 200, ReasoningOutputTokens: 50}); out.Usage != want || out.ThreadUsage != want {
		t.Errorf("usage %+v / %+v, want %+v", out.Usage, out.ThreadUsage, want)
	}
	if len(out.Updates) != 1 || out.Updates[0].ToolCallUpdate == nil || *out.Updates[0].ToolCallUpdate.Status != acpsdk.ToolCallStatusFailed {
		t.Errorf("running command not closed: %+v", out.Updates)
	}
	// The next turn starts clean and counts from the interrupted turn's totals.
	tr.BeginTurn()
	translateAll(t, c, tr, "turn/started", turnStarted,
		"thread/tokenUsage/updated", strings.ReplaceAll(strings.ReplaceAll(usageParams, `"inputTokens":1000`, `"inputTokens":1500`), `"outputTokens":200`, `"outputTokens":210`),
		"turn/completed", turnCompleted("completed", "null"))
	out = tr.EndTurn()
	if out.Interrupted || !out.Completed || out.Usage.InputTokens != 500 || out.Usage.OutputTokens != 10 {
		t.Errorf("next turn outcome %+v", out)
	}
}

func TestTranslateFailedTurnUsage(t *testing.T) {
	c := NewAppServer()
	tr := NewTranslator(Options{ContextWindow: 100000})
	tr.BeginTurn()
	us := translateAll(t, c, tr,
		"turn/started", turnStarted,
		"error", `{"threadId":"th","turnId":"tu-1","willRetry":true,"error":{"message":"Reconnecting... 1/5"}}`,
		"error", `{"threadId":"th","turnId":"tu-1","willRetry":false,"error":{"message":"stream disconnected\nStack backtrace:\n  0: x"}}`,
		"thread/tokenUsage/updated", usageParams,
		"turn/completed", turnCompleted("failed", "null"),
	)
	if s := strings.Join(texts(us), "|"); s != "m:⚠ Reconnecting... 1/5|other" {
		t.Errorf("updates %q", s)
	}
	out := tr.EndTurn()
	if out.FailedMessage != "stream disconnected" || out.Completed || out.Interrupted || out.Usage.InputTokens != 1000 || out.ContextUsed != 700 {
		t.Errorf("outcome %+v", out)
	}
}

func TestTranslateFileChangeDiffs(t *testing.T) {
	c, tr := NewAppServer(), NewTranslator(Options{MaxOutputBytes: 40})
	tr.BeginTurn()
	big := strings.Repeat("y", 41)
	us := translateAll(t, c, tr, "item/completed", itemParams(`{"type":"fileChange","id":"f1","status":"completed","changes":[
		{"path":"/w/new","kind":{"type":"add"},"diff":"hi\n"},
		{"path":"/w/big","kind":{"type":"add"},"diff":"`+big+`"},
		{"path":"/w/gone","kind":{"type":"delete"},"diff":"bye\n"},
		{"path":"/w/upd","kind":{"type":"update"},"diff":"@@ -1 +1 @@\n-a\n+b\n"},
		{"path":"/w/upd2","kind":{"type":"update"},"diff":"@@ -1 +1 @@\n-c\n+d\n"}]}`))
	if len(us) != 1 || us[0].ToolCall == nil {
		t.Fatalf("updates %+v", us)
	}
	tc := us[0].ToolCall
	b, _ := json.Marshal(tc.RawInput)
	if strings.Contains(string(b), "diff") {
		t.Errorf("rawInput carries the diffs: %s", b)
	}
	b, _ = json.Marshal(tc.Content)
	want := `[{"newText":"hi\n","path":"/w/new","type":"diff"},` +
		`{"newText":"","oldText":"bye\n","path":"/w/gone","type":"diff"},` +
		`{"content":{"text":"/w/upd\n` + "```diff" + `\n@@ -1 +1 @@\n-a\n+b\n` + "```" + `","type":"text"},"type":"content"},` +
		`{"content":{"text":"/w/upd2\n` + "```diff" + `\n@@ -1 +\n… 3 bytes omitted …\n@\n-c\n+d\n` + "```" + `","type":"text"},"type":"content"}]`
	if string(b) != want {
		t.Errorf("content\n got %s\nwant %s", b, want)
	}
}

func TestEventKnownAppServer(t *testing.T) {
	for _, tc := range []struct {
		ev   Event
		want bool
	}{
		{Event{Type: TypeTurnInterrupted}, true},
		{Event{Type: TypeItemDelta, Delta: &Delta{Kind: DeltaMessage}}, true},
		{Event{Type: TypeItemDelta, Delta: &Delta{Kind: DeltaReasoning}}, true},
		{Event{Type: TypeItemDelta, Delta: &Delta{Kind: DeltaOutput}}, true},
		{Event{Type: TypeItemDelta, Delta: &Delta{Kind: "patch"}}, false},
		{Event{Type: TypeItemDelta}, false},
	} {
		if got := tc.ev.Known(); got != tc.want {
			t.Errorf("%+v Known() = %v", tc.ev, got)
		}
	}
}

// A command printing a lot in small pieces costs the editor a few times its
// output, not the square of it.
func TestStreamedOutputIsCoalesced(t *testing.T) {
	tr := NewTranslator(Options{})
	tr.Translate(Event{Type: TypeItemStarted, Item: &Item{ID: "c", Type: ItemCommandExecution, Command: "yes", Status: "in_progress"}})
	line := strings.Repeat("y", 59) + "\n"
	var updates, bytes int
	for range 2200 { // 132 kB in 60-byte pieces
		for _, u := range tr.Translate(Event{Type: TypeItemDelta, Delta: &Delta{ItemID: "c", Kind: DeltaOutput, Text: line}}) {
			updates++
			b, err := json.Marshal(u)
			if err != nil {
				t.Fatal(err)
			}
			bytes += len(b)
		}
	}
	if updates == 0 || updates > 40 || bytes > 8*DefaultMaxOutputBytes {
		t.Errorf("%d updates, %d bytes for 132 kB of output", updates, bytes)
	}
	t.Logf("%d updates, %d bytes", updates, bytes)
}

// turn/started names codex's turn: /undo cuts a thread's history by it.
func TestAppServerTurnID(t *testing.T) {
	evs, err := NewAppServer().Convert("turn/started", json.RawMessage(`{"threadId":"th","turn":{"id":"tu-7","items":[],"status":"inProgress"}}`))
	if err != nil || len(evs) != 1 || evs[0].Type != TypeTurnStarted || evs[0].TurnID != "tu-7" {
		t.Fatalf("Convert = %+v, %v; want turn.started of tu-7", evs, err)
	}
}
