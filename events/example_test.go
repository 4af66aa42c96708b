package events_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/codexacp/codexacp/events"
)

// show prints a session update as the JSON an editor receives in
// session/update's "update".
func show(u any) {
	b, err := json.Marshal(u)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(string(b))
}

// A turn of `codex exec --json`: each line is parsed and translated into
// the session updates the editor is sent; EndTurn says how the turn ended.
func ExampleTranslator() {
	lines := []string{
		`{"type":"thread.started","thread_id":"01a2-thread"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"bash -lc 'ls -1'","aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"bash -lc 'ls -1'","aggregated_output":"go.mod\n","exit_code":0,"status":"completed"}}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"There is one file."}}`,
		`{"type":"some.future_event"}`,
		`{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":20,"output_tokens":10}}`,
	}
	tr := events.NewTranslator(events.Options{OwnMCPServer: "acp", ContextWindow: 272000})
	tr.BeginTurn()
	for _, line := range lines {
		ev, err := events.Parse([]byte(line))
		if err != nil {
			fmt.Println("not an event:", err)
			continue
		}
		if !ev.Known() {
			fmt.Println("ignored:", ev.Type)
		}
		for _, u := range tr.Translate(ev) {
			show(u)
		}
	}
	out := tr.EndTurn()
	fmt.Printf("thread %s, completed %v, %d input and %d output tokens\n", out.ThreadID, out.Completed, out.Usage.InputTokens, out.Usage.OutputTokens)
	// Output:
	// {"kind":"execute","rawInput":{"command":"bash -lc 'ls -1'"},"sessionUpdate":"tool_call","status":"in_progress","title":"ls -1","toolCallId":"t1-item_0"}
	// {"content":[{"content":{"text":"```\ngo.mod\n```","type":"text"},"type":"content"}],"rawOutput":{"exit_code":0,"output":"go.mod\n"},"sessionUpdate":"tool_call_update","status":"completed","toolCallId":"t1-item_0"}
	// {"content":{"text":"There is one file.","type":"text"},"sessionUpdate":"agent_message_chunk"}
	// ignored: some.future_event
	// {"sessionUpdate":"usage_update","size":272000,"used":60}
	// thread 01a2-thread, completed true, 100 input and 10 output tokens
}

// The notifications of one `codex app-server` thread become the same Events
// as exec's lines, for the same Translator: streamed text arrives as deltas
// (the completed message then sends nothing more), the usage is kept from
// thread/tokenUsage/updated for turn/completed, and notifications without
// an event give none.
func ExampleAppServer_Convert() {
	notifications := []struct{ method, params string }{
		{"turn/started", `{"threadId":"th","turn":{"id":"tu","items":[],"status":"inProgress"}}`},
		{"item/started", `{"threadId":"th","turnId":"tu","item":{"type":"agentMessage","id":"msg_1","text":""}}`},
		{"item/agentMessage/delta", `{"threadId":"th","turnId":"tu","itemId":"msg_1","delta":"Hello th"}`},
		{"item/agentMessage/delta", `{"threadId":"th","turnId":"tu","itemId":"msg_1","delta":"ere"}`},
		{"item/completed", `{"threadId":"th","turnId":"tu","item":{"type":"agentMessage","id":"msg_1","text":"Hello there"}}`},
		{"thread/tokenUsage/updated", `{"threadId":"th","turnId":"tu","tokenUsage":{"total":{"totalTokens":110,"inputTokens":100,"cachedInputTokens":20,"outputTokens":10,"reasoningOutputTokens":0},"last":{"totalTokens":110,"inputTokens":100,"cachedInputTokens":20,"outputTokens":10,"reasoningOutputTokens":0},"modelContextWindow":272000}}`},
		{"turn/completed", `{"threadId":"th","turn":{"id":"tu","items":[],"status":"completed"}}`},
		{"account/rateLimits/updated", `{}`}, // not converted
	}
	conv := events.NewAppServer()
	tr := events.NewTranslator(events.Options{})
	tr.BeginTurn()
	for _, n := range notifications {
		evs, err := conv.Convert(n.method, json.RawMessage(n.params))
		if err != nil {
			fmt.Println(n.method, "error:", err)
			continue
		}
		for _, ev := range evs {
			fmt.Printf("%s → %s\n", n.method, ev.Type)
			for _, u := range tr.Translate(ev) {
				show(u)
			}
		}
	}
	out := tr.EndTurn()
	fmt.Printf("completed %v, %d output tokens\n", out.Completed, out.Usage.OutputTokens)
	// Output:
	// turn/started → turn.started
	// item/started → item.started
	// item/agentMessage/delta → item.delta
	// {"content":{"text":"Hello th","type":"text"},"sessionUpdate":"agent_message_chunk"}
	// item/agentMessage/delta → item.delta
	// {"content":{"text":"ere","type":"text"},"sessionUpdate":"agent_message_chunk"}
	// item/completed → item.completed
	// turn/completed → turn.completed
	// completed true, 10 output tokens
}

// The editor sees a command as the model wrote it, without the shell
// wrapper codex runs it in.
func ExampleUnwrapShellCommand() {
	fmt.Println(events.UnwrapShellCommand(`/bin/bash -lc 'go test ./... && echo '"'"'done'"'"''`))
	fmt.Println(events.UnwrapShellCommand(`bash -o pipefail -c 'make'`)) // options with arguments: kept whole
	// Output:
	// go test ./... && echo 'done'
	// bash -o pipefail -c 'make'
}

// History replays a stored conversation (codex's rollout of the thread) for
// session/load: the user's messages as user_message_chunk, the model's as
// agent_message_chunk, tool calls completed with their results. Records it
// does not know are skipped.
func ExampleHistory() {
	rollout := strings.Join([]string{
		`{"timestamp":"2026-11-23T01:25:33.142Z","type":"session_meta","payload":{"id":"th","cwd":"/w"}}`,
		`{"timestamp":"2026-11-23T01:25:33.199Z","type":"event_msg","payload":{"type":"item_completed","thread_id":"th","item":{"type":"UserMessage","id":"u1","content":[{"type":"text","text":"what is 6*7?"}]}}}`,
		`{"timestamp":"2026-11-23T01:25:34.001Z","type":"event_msg","payload":{"type":"item_completed","thread_id":"th","item":{"type":"AgentMessage","id":"msg_1","content":[{"type":"Text","text":"42"}]}}}`,
		`{"timestamp":"2026-11-23T01:25:34.002Z","type":"some_future_record","payload":{}}`,
	}, "\n")
	updates, err := events.History(strings.NewReader(rollout), events.HistoryOptions{OwnMCPServer: "acp"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	for _, u := range updates {
		show(u)
	}
	// Output:
	// {"content":{"text":"what is 6*7?","type":"text"},"sessionUpdate":"user_message_chunk"}
	// {"content":{"text":"42","type":"text"},"sessionUpdate":"agent_message_chunk"}
}
