package events

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/internal/stress"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		check func(t *testing.T, ev Event)
	}{
		{"thread started", `{"type":"thread.started","thread_id":"th-1"}`, func(t *testing.T, ev Event) {
			if ev.Type != TypeThreadStarted || ev.ThreadID != "th-1" || ev.Item != nil {
				t.Errorf("got %+v", ev)
			}
		}},
		{"web_search with two id keys keeps the item id", `{"type":"item.completed","item":{"id":"item_0","type":"web_search","id":"ws_0001","query":"q","action":{"type":"search","query":"q"}}}`, func(t *testing.T, ev Event) {
			if ev.Item.ID != "item_0" || ev.Item.Query != "q" || ev.Item.Action.Type != "search" {
				t.Errorf("got %+v", ev.Item)
			}
		}},
		{"command running", `{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}`, func(t *testing.T, ev Event) {
			if ev.Item.ExitCode != nil || ev.Item.Status != "in_progress" || ev.Item.Command != "ls" {
				t.Errorf("got %+v", ev.Item)
			}
		}},
		{"command exit code", `{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"false","aggregated_output":"x","exit_code":3,"status":"failed"}}`, func(t *testing.T, ev Event) {
			if ev.Item.ExitCode == nil || *ev.Item.ExitCode != 3 || ev.Item.AggregatedOutput != "x" {
				t.Errorf("got %+v", ev.Item)
			}
		}},
		{"mcp call", `{"type":"item.completed","item":{"id":"item_0","type":"mcp_tool_call","server":"probe","tool":"echo","arguments":{"text":"a"},"result":{"content":[{"type":"text","text":"echo: a"}],"structured_content":{"n":1}},"error":null,"status":"completed"}}`, func(t *testing.T, ev Event) {
			it := ev.Item
			if it.Server != "probe" || it.Tool != "echo" || string(it.Arguments) != `{"text":"a"}` || it.Error != nil ||
				it.Result == nil || len(it.Result.Content) != 1 || string(it.Result.StructuredContent) != `{"n":1}` {
				t.Errorf("got %+v", it)
			}
		}},
		{"turn completed usage", `{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":20,"cache_write_input_tokens":1,"output_tokens":10,"reasoning_output_tokens":3}}`, func(t *testing.T, ev Event) {
			want := Usage{InputTokens: 100, CachedInputTokens: 20, CacheWriteInputTokens: 1, OutputTokens: 10, ReasoningOutputTokens: 3}
			if ev.Usage == nil || *ev.Usage != want {
				t.Errorf("got %+v", ev.Usage)
			}
		}},
		{"turn failed", `{"type":"turn.failed","error":{"message":"boom"}}`, func(t *testing.T, ev Event) {
			if ev.Error == nil || ev.Error.Message != "boom" {
				t.Errorf("got %+v", ev.Error)
			}
		}},
		{"turn failed with a bare string error", `{"type":"turn.failed","error":"boom"}`, func(t *testing.T, ev Event) {
			if ev.Error == nil || ev.Error.Message != "boom" {
				t.Errorf("got %+v", ev.Error)
			}
		}},
		{"top-level error", `{"type":"error","message":"Reconnecting... 1/5"}`, func(t *testing.T, ev Event) {
			if ev.Message != "Reconnecting... 1/5" {
				t.Errorf("got %+v", ev)
			}
		}},
		{"unknown type and fields", `{"type":"session.configured","model":"x","item":{"id":"item_9","type":"collab","extra":[1,2]}}`, func(t *testing.T, ev Event) {
			if ev.Type != "session.configured" || ev.Item == nil || ev.Item.ID != "item_9" || ev.Known() {
				t.Errorf("got %+v", ev)
			}
		}},
		{"null item", `{"type":"item.completed","item":null}`, func(t *testing.T, ev Event) {
			if ev.Item != nil || ev.Known() {
				t.Errorf("got %+v", ev)
			}
		}},
		{"surrounding space and CRLF", " {\"type\":\"turn.started\"}\r\n", func(t *testing.T, ev Event) {
			if ev.Type != TypeTurnStarted {
				t.Errorf("got %+v", ev)
			}
		}},
		{"id not first", `{"type":"item.completed","item":{"type":"agent_message","text":"{\"id\":1}","id":"item_4"}}`, func(t *testing.T, ev Event) {
			if ev.Item.ID != "item_4" || ev.Item.Text != `{"id":1}` {
				t.Errorf("got %+v", ev.Item)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Parse([]byte(tt.line))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.check(t, ev)
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, line := range []string{
		"",
		"   \n",
		"not json",
		`["type","x"]`,
		`"item.completed"`,
		`{"thread_id":"x"}`,
		`{"type":5}`,
		`{"type":"item.completed","item":{"id":`,
		`{"type":"item.completed","item":"text"}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"command_execution","exit_code":"three"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":"many"}}`,
		"\x00\x01garbage\xff",
	} {
		if ev, err := Parse([]byte(line)); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", line, ev)
		}
	}
}

// TestParseHugeLine: a line far past any line buffer (a command's whole
// output in one item.completed) parses whole. Parse has no bound of its
// own, so the quick loop's 4 MiB shows what CI's 32 MiB does.
func TestParseHugeLine(t *testing.T) {
	out := strings.Repeat("0123456789abcdef", stress.Size(t, 4, 32)<<16) // 4 or 32 MiB
	line, err := json.Marshal(map[string]any{
		"type": "item.completed",
		"item": map[string]any{"id": "item_7", "type": "command_execution", "command": "cat big", "aggregated_output": out, "exit_code": 0, "status": "completed"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Item.ID != "item_7" || len(ev.Item.AggregatedOutput) != len(out) {
		t.Errorf("id %q, output %d bytes, want item_7 and %d", ev.Item.ID, len(ev.Item.AggregatedOutput), len(out))
	}
}

func TestEventKnown(t *testing.T) {
	item := func(typ string) *Item { return &Item{ID: "item_0", Type: typ} }
	tests := []struct {
		ev   Event
		want bool
	}{
		{Event{Type: TypeThreadStarted}, true},
		{Event{Type: TypeTurnStarted}, true},
		{Event{Type: TypeTurnCompleted}, true},
		{Event{Type: TypeTurnFailed}, true},
		{Event{Type: TypeError}, true},
		{Event{Type: TypeItemStarted, Item: item(ItemCommandExecution)}, true},
		{Event{Type: TypeItemUpdated, Item: item(ItemTodoList)}, true},
		{Event{Type: TypeItemCompleted, Item: item(ItemWebSearch)}, true},
		{Event{Type: TypeItemCompleted, Item: item(ItemCollabToolCall)}, true},
		{Event{Type: TypeItemCompleted, Item: item(ItemImageGeneration)}, true},
		{Event{Type: TypeItemCompleted, Item: item("sleep")}, false},
		{Event{Type: TypeItemCompleted}, false},
		{Event{Type: "session.configured"}, false},
	}
	for _, tt := range tests {
		if got := tt.ev.Known(); got != tt.want {
			t.Errorf("%+v Known() = %v, want %v", tt.ev, got, tt.want)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	line := []byte(`{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc 'ls -la'","aggregated_output":"total 8\ndrwxr-xr-x 2 root root 4096 .\n","exit_code":0,"status":"completed"}}`)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := Parse(line); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseLargeOutput(b *testing.B) {
	line, _ := json.Marshal(map[string]any{
		"type": "item.completed",
		"item": map[string]any{"id": "item_7", "type": "command_execution", "command": "cat big", "aggregated_output": strings.Repeat("log line\n", 1<<17), "exit_code": 0, "status": "completed"},
	})
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := Parse(line); err != nil {
			b.Fatal(err)
		}
	}
}
