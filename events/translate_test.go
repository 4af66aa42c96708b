package events

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"
)

// feed parses lines and translates them, checking every update.
func feed(t *testing.T, tr *Translator, lines ...string) []acpsdk.SessionUpdate {
	t.Helper()
	var all []acpsdk.SessionUpdate
	for _, l := range lines {
		ev, err := Parse([]byte(l))
		if err != nil {
			t.Fatalf("Parse(%s): %v", l, err)
		}
		for _, u := range tr.Translate(ev) {
			checkUpdate(t, u)
			all = append(all, u)
		}
	}
	return all
}

// feedFile translates a testdata/codex capture as one turn.
func feedFile(t *testing.T, tr *Translator, name string) ([]acpsdk.SessionUpdate, Outcome) {
	t.Helper()
	tr.BeginTurn()
	var lines []string
	for _, l := range readLines(t, filepath.Join(capturedDir, name)) {
		lines = append(lines, string(l))
	}
	updates := feed(t, tr, lines...)
	return updates, tr.EndTurn()
}

func TestUsageAcrossTurns(t *testing.T) {
	tr := NewTranslator(Options{OwnMCPServer: "acp", ContextWindow: 272000})

	u1, out1 := feedFile(t, tr, "usage_cumulative_run1.jsonl")
	want1 := Usage{InputTokens: 1000, OutputTokens: 1}
	if out1.Usage != want1 || out1.ThreadUsage != want1 || out1.ContextUsed != 1001 || !out1.Completed {
		t.Errorf("turn 1 outcome %+v", out1)
	}
	checkUsageUpdate(t, u1, 1001, 272000)

	u2, out2 := feedFile(t, tr, "usage_cumulative_run2_resume.jsonl")
	if want := (Usage{InputTokens: 20, OutputTokens: 2}); out2.Usage != want {
		t.Errorf("turn 2 usage %+v, want %+v (codex's totals minus turn 1's)", out2.Usage, want)
	}
	if want := (Usage{InputTokens: 1020, OutputTokens: 3}); out2.ThreadUsage != want {
		t.Errorf("turn 2 thread usage %+v, want %+v", out2.ThreadUsage, want)
	}
	checkUsageUpdate(t, u2, 22, 272000)
}

func checkUsageUpdate(t *testing.T, us []acpsdk.SessionUpdate, used, size int) {
	t.Helper()
	var got []*acpsdk.SessionUsageUpdate
	for _, u := range us {
		if u.UsageUpdate != nil {
			got = append(got, u.UsageUpdate)
		}
	}
	if len(got) != 1 || got[0].Used != used || got[0].Size != size {
		t.Errorf("usage updates %+v, want one with used %d size %d", got, used, size)
	}
}

func TestUsageRestoredSession(t *testing.T) {
	const thread = "01a205a4-6059-7212-a95c-130334ed2635"
	tr := NewTranslator(Options{ThreadID: thread, ThreadUsage: Usage{InputTokens: 1000, OutputTokens: 1}})
	_, out := feedFile(t, tr, "usage_cumulative_run2_resume.jsonl")
	if want := (Usage{InputTokens: 20, OutputTokens: 2}); out.Usage != want {
		t.Errorf("usage %+v, want %+v", out.Usage, want)
	}
}

func TestUsageNewThreadStartsFromZero(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"different thread id", Options{ThreadID: "old-thread", ThreadUsage: Usage{InputTokens: 50, OutputTokens: 5}}},
		{"totals went down", Options{ThreadUsage: Usage{InputTokens: 5000, OutputTokens: 50}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, out := feedFile(t, NewTranslator(tt.opts), "usage_cumulative_run1.jsonl")
			if want := (Usage{InputTokens: 1000, OutputTokens: 1}); out.Usage != want {
				t.Errorf("usage %+v, want %+v", out.Usage, want)
			}
		})
	}
}

func TestUsageUpdateSizeAndEstimate(t *testing.T) {
	usage := `{"type":"turn.completed","usage":{"input_tokens":4000,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":100,"reasoning_output_tokens":0}}`
	cmd := func(id string) []string {
		return []string{
			`{"type":"item.started","item":{"id":"` + id + `","type":"command_execution","command":"ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
			`{"type":"item.completed","item":{"id":"` + id + `","type":"command_execution","command":"ls","aggregated_output":"","exit_code":0,"status":"completed"}}`,
		}
	}
	own := `{"type":"item.completed","item":{"id":"item_9","type":"mcp_tool_call","server":"acp","tool":"edit_text_file","arguments":{},"result":{"content":[]},"error":null,"status":"completed"}}`
	search := `{"type":"item.completed","item":{"id":"item_8","type":"web_search","id":"ws","query":"q"}}`
	tests := []struct {
		name     string
		window   int
		lines    []string
		wantUsed int
		wantSent bool
	}{
		{"one request", 272000, []string{usage}, 4100, true},
		// Three tool results went back to the model (two commands and our
		// own MCP tool): four requests, 1000 input tokens each on average.
		{"tool calls", 272000, append(append(append(cmd("item_0"), cmd("item_1")...), own, search), usage), 1100, true},
		{"clamped to the window", 2000, []string{usage}, 2000, true},
		{"unknown window", 0, []string{usage}, 4100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTranslator(Options{OwnMCPServer: "acp", ContextWindow: tt.window})
			tr.BeginTurn()
			us := feed(t, tr, tt.lines...)
			out := tr.EndTurn()
			if out.ContextUsed != tt.wantUsed {
				t.Errorf("ContextUsed = %d, want %d", out.ContextUsed, tt.wantUsed)
			}
			var sent []acpsdk.SessionUpdate
			for _, u := range us {
				if u.UsageUpdate != nil {
					sent = append(sent, u)
				}
			}
			if tt.wantSent {
				checkUsageUpdate(t, us, tt.wantUsed, tt.window)
			} else if len(sent) != 0 {
				t.Errorf("usage_update sent without a context window: %+v", sent[0].UsageUpdate)
			}
		})
	}
}

func TestThreadID(t *testing.T) {
	tr := NewTranslator(Options{})
	_, out := feedFile(t, tr, "resume_run1.jsonl")
	if out.ThreadID != "01a20598-cad2-7d51-be66-c4b393321fdc" {
		t.Errorf("ThreadID = %q", out.ThreadID)
	}
	// A later turn without thread.started (cancelled early) keeps the id.
	tr.BeginTurn()
	if out := tr.EndTurn(); out.ThreadID != "01a20598-cad2-7d51-be66-c4b393321fdc" {
		t.Errorf("ThreadID after an empty turn = %q", out.ThreadID)
	}
	if out := NewTranslator(Options{ThreadID: "stored"}).EndTurn(); out.ThreadID != "stored" {
		t.Errorf("ThreadID from options = %q", out.ThreadID)
	}
}

func TestTurnFailed(t *testing.T) {
	tests := []struct {
		file, want string
	}{
		{"turn_failed_http400.jsonl", `{"error": {"message": "Invalid 'input': mock bad request", "type": "invalid_request_error", "param": "input", "code": "invalid_value"}}`},
		{"turn_failed_http500_noretry.jsonl", "We’re currently experiencing high demand, which may cause temporary errors."},
		{"turn_failed_response_failed.jsonl", "stream disconnected before completion: mock response.failed"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			updates, out := feedFile(t, NewTranslator(Options{ContextWindow: 1000}), tt.file)
			if out.FailedMessage != tt.want || out.Completed {
				t.Errorf("outcome %+v, want failed with %q", out, tt.want)
			}
			// The top-level error events before turn.failed are warnings.
			for _, u := range updates {
				if u.AgentMessageChunk == nil {
					t.Errorf("unexpected update %+v", u)
					continue
				}
				if txt := u.AgentMessageChunk.Content.Text.Text; !strings.Contains(txt, "⚠ ") && !strings.Contains(txt, "partial text") {
					t.Errorf("message %q is not a warning", txt)
				}
			}
		})
	}
	t.Run("backtrace and empty message", func(t *testing.T) {
		tr := NewTranslator(Options{})
		feed(t, tr, `{"type":"turn.failed","error":{"message":"quota exceeded\n\nStack backtrace:\n   0: <unknown>\n   1: <unknown>"}}`)
		if out := tr.EndTurn(); out.FailedMessage != "quota exceeded" {
			t.Errorf("FailedMessage = %q", out.FailedMessage)
		}
		tr.BeginTurn()
		feed(t, tr, `{"type":"turn.failed","error":{"message":""}}`)
		if out := tr.EndTurn(); out.FailedMessage == "" {
			t.Error("empty turn.failed message gives no FailedMessage: the turn would not count as failed")
		}
	})
}

func TestOwnServerSuppressed(t *testing.T) {
	started := `{"type":"item.started","item":{"id":"item_0","type":"mcp_tool_call","server":"%s","tool":"edit_text_file","arguments":{"path":"/w/a"},"result":null,"error":null,"status":"in_progress"}}`
	completed := `{"type":"item.completed","item":{"id":"item_0","type":"mcp_tool_call","server":"%s","tool":"edit_text_file","arguments":{"path":"/w/a"},"result":{"content":[{"type":"text","text":"ok"}]},"error":null,"status":"completed"}}`
	lines := func(server string) []string {
		return []string{strings.Replace(started, "%s", server, 1), strings.Replace(completed, "%s", server, 1)}
	}
	tests := []struct {
		name, own, server string
		want              int
	}{
		{"own server", "acp", "acp", 0},
		{"other server", "acp", "probe", 2},
		{"no own server configured", "", "acp", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTranslator(Options{OwnMCPServer: tt.own})
			tr.BeginTurn()
			us := feed(t, tr, lines(tt.server)...)
			if len(us) != tt.want {
				t.Errorf("%d updates, want %d: %+v", len(us), tt.want, us)
			}
			if out := tr.EndTurn(); len(out.Updates) != 0 {
				t.Errorf("EndTurn closes %d calls", len(out.Updates))
			}
		})
	}
}

func TestToolCallIDs(t *testing.T) {
	tr := NewTranslator(Options{})
	var ids []acpsdk.ToolCallId
	for range 2 {
		tr.BeginTurn()
		us := feed(t, tr,
			`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
			`{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"ls","aggregated_output":"a\n","exit_code":0,"status":"completed"}}`,
		)
		if len(us) != 2 || us[0].ToolCall == nil || us[1].ToolCallUpdate == nil {
			t.Fatalf("want tool_call then tool_call_update, got %+v", us)
		}
		if us[0].ToolCall.ToolCallId != us[1].ToolCallUpdate.ToolCallId {
			t.Errorf("started and completed ids differ: %q, %q", us[0].ToolCall.ToolCallId, us[1].ToolCallUpdate.ToolCallId)
		}
		ids = append(ids, us[0].ToolCall.ToolCallId)
		tr.EndTurn()
	}
	if ids[0] == ids[1] {
		t.Errorf("item_0 of two turns got the same tool call id %q", ids[0])
	}
}

func TestTranslateBeforeBeginTurn(t *testing.T) {
	tr := NewTranslator(Options{})
	us := feed(t, tr, `{"type":"item.started","item":{"id":"item_0","type":"web_search","query":"q"}}`)
	if len(us) != 1 || us[0].ToolCall == nil || us[0].ToolCall.ToolCallId != "t1-item_0" {
		t.Fatalf("got %+v", us)
	}
	tr.BeginTurn() // the caller's first BeginTurn after early events: still unique
	us = feed(t, tr, `{"type":"item.started","item":{"id":"item_0","type":"web_search","query":"q"}}`)
	if us[0].ToolCall.ToolCallId == "t1-item_0" {
		t.Error("tool call id reused")
	}
}

func TestCompletedWithoutStarted(t *testing.T) {
	tr := NewTranslator(Options{})
	us := feed(t, tr, `{"type":"item.completed","item":{"id":"item_3","type":"command_execution","command":"/bin/bash -lc 'exit 2'","aggregated_output":"oops\n","exit_code":2,"status":"failed"}}`)
	if len(us) != 1 || us[0].ToolCall == nil {
		t.Fatalf("want one tool_call, got %+v", us)
	}
	tc := us[0].ToolCall
	if tc.Status != acpsdk.ToolCallStatusFailed || tc.Kind != acpsdk.ToolKindExecute || tc.Title != "exit 2" ||
		len(tc.Content) != 1 || tc.RawOutput == nil {
		t.Errorf("got %+v", tc)
	}
	if out := tr.EndTurn(); len(out.Updates) != 0 {
		t.Errorf("a finished call is closed again: %+v", out.Updates)
	}
}

func TestRepeatedEventSendsNothing(t *testing.T) {
	tr := NewTranslator(Options{})
	line := `{"type":"item.updated","item":{"id":"item_0","type":"command_execution","command":"ls","aggregated_output":"a","exit_code":null,"status":"in_progress"}}`
	if us := feed(t, tr, line); len(us) != 1 {
		t.Fatalf("first: %+v", us)
	}
	if us := feed(t, tr, line); len(us) != 0 {
		t.Errorf("identical item.updated sent %+v", us)
	}
	us := feed(t, tr, strings.Replace(line, `"a"`, `"ab"`, 1))
	if len(us) != 1 || us[0].ToolCallUpdate == nil || len(us[0].ToolCallUpdate.Content) != 1 || us[0].ToolCallUpdate.Status != nil {
		t.Errorf("new output: want a content-only update, got %+v", us)
	}
}

func TestTextSeparation(t *testing.T) {
	msg := func(s string) string {
		return `{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"` + s + `"}}`
	}
	thought := `{"type":"item.completed","item":{"id":"r","type":"reasoning","text":"hmm"}}`
	tool := `{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"ls","aggregated_output":"","exit_code":0,"status":"completed"}}`
	warn := `{"type":"error","message":"Reconnecting... 1/5"}`
	tests := []struct {
		name  string
		lines []string
		want  []string // text of each chunk
	}{
		{"two messages", []string{msg("a"), msg("b")}, []string{"a", "\n\nb"}},
		{"tool call between", []string{msg("a"), tool, msg("b")}, []string{"a", "", "b"}},
		{"thoughts between", []string{thought, msg("a"), thought}, []string{"hmm", "a", "hmm"}},
		{"warning then message", []string{warn, msg("a")}, []string{"⚠ Reconnecting... 1/5", "\n\na"}},
		{"empty message", []string{msg("a"), msg(""), thought}, []string{"a", "hmm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTranslator(Options{})
			var got []string
			for _, u := range feed(t, tr, tt.lines...) {
				switch {
				case u.AgentMessageChunk != nil:
					got = append(got, u.AgentMessageChunk.Content.Text.Text)
				case u.AgentThoughtChunk != nil:
					got = append(got, u.AgentThoughtChunk.Content.Text.Text)
				default:
					got = append(got, "")
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("chunks %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("new turn starts a new message", func(t *testing.T) {
		tr := NewTranslator(Options{})
		feed(t, tr, msg("a"))
		tr.EndTurn()
		tr.BeginTurn()
		if us := feed(t, tr, msg("b")); us[0].AgentMessageChunk.Content.Text.Text != "b" {
			t.Errorf("got %q", us[0].AgentMessageChunk.Content.Text.Text)
		}
	})
}

func TestEndTurnClosesRunningCalls(t *testing.T) {
	tr := NewTranslator(Options{})
	tr.BeginTurn()
	feed(t, tr,
		`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"sleep 9","aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
		`{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"probe","tool":"slow","arguments":{},"result":null,"error":null,"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"probe","tool":"slow","arguments":{},"result":{"content":[]},"error":null,"status":"completed"}}`,
		`{"type":"item.started","item":{"id":"item_2","type":"file_change","changes":[{"path":"/w/a","kind":"add"}],"status":"in_progress"}}`,
	)
	out := tr.EndTurn()
	var closed []string
	for _, u := range out.Updates {
		checkUpdate(t, u)
		if u.ToolCallUpdate == nil || u.ToolCallUpdate.Status == nil || *u.ToolCallUpdate.Status != acpsdk.ToolCallStatusFailed {
			t.Errorf("closing update %+v is not a failed status", u)
			continue
		}
		closed = append(closed, string(u.ToolCallUpdate.ToolCallId))
	}
	if got := strings.Join(closed, ","); got != "t1-item_0,t1-item_2" {
		t.Errorf("closed %s, want t1-item_0,t1-item_2", got)
	}
}

func TestCommandOutputLimit(t *testing.T) {
	out := strings.Repeat("é", 3000) + "END"
	line, _ := json.Marshal(map[string]any{"type": "item.completed", "item": map[string]any{
		"id": "item_0", "type": "command_execution", "command": "cat", "aggregated_output": out, "exit_code": 0, "status": "completed",
	}})
	tr := NewTranslator(Options{MaxOutputBytes: 1001})
	us := feed(t, tr, string(line))
	text := us[0].ToolCall.Content[0].Content.Content.Text.Text
	if !utf8.ValidString(text) || !strings.Contains(text, "bytes omitted") || !strings.HasSuffix(text, "END\n```") {
		t.Errorf("content %q", text)
	}
	raw := us[0].ToolCall.RawOutput.(map[string]any)["output"].(string)
	if len(raw) > 1100 || !strings.HasPrefix(raw, "éé") {
		t.Errorf("rawOutput.output has %d bytes: %q", len(raw), raw)
	}
}

func TestLimitText(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"0123456789", 10, "0123456789"},
		{"0123456789ab", 10, "01234\n… 2 bytes omitted …\n789ab"},
		{"ééééé", 4, "é\n… 6 bytes omitted …\né"},
		{"aéééa", 4, "a\n… 4 bytes omitted …\néa"},
	}
	for _, tt := range tests {
		if got := limitText(tt.in, tt.limit); got != tt.want {
			t.Errorf("limitText(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}

func TestFenced(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a\n", "```\na\n```"},
		{"a", "```\na\n```"},
		{"x ``` y", "````\nx ``` y\n````"},
		{"`````", "``````\n`````\n``````"},
	}
	for _, tt := range tests {
		if got := fenced(tt.in); got != tt.want {
			t.Errorf("fenced(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFileChangeTitle(t *testing.T) {
	ch := func(kind string, paths ...string) []FileChange {
		var out []FileChange
		for _, p := range paths {
			out = append(out, FileChange{Path: p, Kind: kind})
		}
		return out
	}
	tests := []struct {
		changes []FileChange
		want    string
	}{
		{ch("update", "/w/a.go", "/w/pkg/b.go"), "Edit a.go, b.go"},
		{ch("add", "/w/x"), "Add x"},
		{ch("delete", "/w/y"), "Delete y"},
		{append(ch("update", "/w/a"), ch("add", "/w/b")...), "Edit a; add b"},
		{ch("update", "/1", "/2", "/3", "/4", "/5"), "Edit 1, 2, 3 and 2 more"},
		{ch("rename", "/w/z"), "Change z"},
		{nil, "Edit files"},
	}
	for _, tt := range tests {
		if got := fileChangeTitle(tt.changes); got != tt.want {
			t.Errorf("fileChangeTitle(%v) = %q, want %q", tt.changes, got, tt.want)
		}
	}
}

func TestWebSearchTitle(t *testing.T) {
	tests := []struct {
		it   Item
		want string
	}{
		{Item{Query: "codex cli"}, "Web search: codex cli"},
		{Item{Action: &WebSearchAction{Type: "search", Query: "from action"}}, "Web search: from action"},
		{Item{Action: &WebSearchAction{Type: "search", Queries: []string{"a", "b"}}}, "Web search: a, b"},
		{Item{Action: &WebSearchAction{Type: "open_page", URL: "https://go.dev"}}, "Open https://go.dev"},
		{Item{Action: &WebSearchAction{Type: "find_in_page", URL: "https://go.dev", Pattern: "iter"}}, `Find "iter" in https://go.dev`},
		{Item{}, "Web search"},
	}
	for _, tt := range tests {
		if got := webSearchTitle(&tt.it); got != tt.want {
			t.Errorf("webSearchTitle(%+v) = %q, want %q", tt.it, got, tt.want)
		}
	}
}

func TestItemStatus(t *testing.T) {
	code := func(c int) *int { return &c }
	tests := []struct {
		done   bool
		status string
		exit   *int
		want   acpsdk.ToolCallStatus
	}{
		{false, "in_progress", nil, acpsdk.ToolCallStatusInProgress},
		{false, "", nil, acpsdk.ToolCallStatusInProgress},
		{true, "completed", code(0), acpsdk.ToolCallStatusCompleted},
		{true, "completed", code(1), acpsdk.ToolCallStatusFailed},
		{true, "failed", code(3), acpsdk.ToolCallStatusFailed},
		{true, "failed", nil, acpsdk.ToolCallStatusFailed},
		{true, "declined", nil, acpsdk.ToolCallStatusFailed},
		{true, "", nil, acpsdk.ToolCallStatusCompleted},
		{true, "in_progress", code(2), acpsdk.ToolCallStatusFailed},
		{true, "weird", nil, acpsdk.ToolCallStatusCompleted},
	}
	for _, tt := range tests {
		if got := itemStatus(tt.done, tt.status, tt.exit); got != tt.want {
			t.Errorf("itemStatus(%v, %q, %v) = %q, want %q", tt.done, tt.status, tt.exit, got, tt.want)
		}
	}
}

func TestPlan(t *testing.T) {
	items := []TodoItem{{"a", true}, {"b", false}, {"c", false}}
	status := func(u acpsdk.SessionUpdate) string {
		var s []string
		for _, e := range u.Plan.Entries {
			s = append(s, string(e.Status))
		}
		return strings.Join(s, ",")
	}
	if got := status(planUpdate(items, false)); got != "completed,in_progress,pending" {
		t.Errorf("running plan: %s", got)
	}
	if got := status(planUpdate(items, true)); got != "completed,pending,pending" {
		t.Errorf("final plan: %s", got)
	}
	empty := planUpdate(nil, false)
	checkUpdate(t, empty) // entries must be [] rather than null
	if empty.Plan.Entries == nil {
		t.Error("empty plan has nil entries")
	}
}

func TestUsageACP(t *testing.T) {
	u := Usage{InputTokens: 100, CachedInputTokens: 20, CacheWriteInputTokens: 5, OutputTokens: 10, ReasoningOutputTokens: 3}.ACP()
	if u.InputTokens != 100 || u.OutputTokens != 10 || u.TotalTokens != 110 || *u.CachedReadTokens != 20 ||
		*u.CachedWriteTokens != 5 || *u.ThoughtTokens != 3 {
		t.Errorf("got %+v", u)
	}
}

func BenchmarkTranslateFixtures(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(capturedDir, "*.jsonl"))
	var events []Event
	for _, f := range files {
		for _, l := range readLines(b, f) {
			ev, err := Parse(l)
			if err != nil {
				b.Fatal(err)
			}
			events = append(events, ev)
		}
	}
	tr := NewTranslator(Options{OwnMCPServer: "acp", ContextWindow: 272000})
	b.ReportMetric(float64(len(events)), "events/op")
	for b.Loop() {
		tr.BeginTurn()
		for _, ev := range events {
			tr.Translate(ev)
		}
		tr.EndTurn()
	}
}

// A message after one of our own tool calls (reported by the agent, not
// here) starts a new editor entry: no paragraph break in front of it.
func TestMessageAfterOwnToolCallHasNoBreak(t *testing.T) {
	tr := NewTranslator(Options{OwnMCPServer: "acp"})
	tr.BeginTurn()
	us := feed(t, tr,
		`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Editing."}}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"acp","tool":"edit_text_file","arguments":{},"result":{"content":[]},"error":null,"status":"completed"}}`,
		`{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"Done."}}`)
	if len(us) != 2 || us[1].AgentMessageChunk == nil || us[1].AgentMessageChunk.Content.Text.Text != "Done." {
		t.Errorf("updates = %+v", us)
	}
}
