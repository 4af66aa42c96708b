package events

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// TestHistoryGolden replays a real codex 0.169 rollout (a turn with a
// reasoning summary, an edit through our tool server and a shell command,
// then a resumed turn), trimmed to the records History reads.
func TestHistoryGolden(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "rollout", "edit_command_resume.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	us, err := History(bytes.NewReader(in), HistoryOptions{OwnMCPServer: "acp"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(marshalUpdates(t, us), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "golden-history", "edit_command_resume.json"), append(got, '\n'), "edit_command_resume.jsonl")
	var kinds []string
	for _, u := range us {
		switch {
		case u.UserMessageChunk != nil:
			kinds = append(kinds, "user")
		case u.AgentMessageChunk != nil:
			kinds = append(kinds, "agent")
		case u.AgentThoughtChunk != nil:
			kinds = append(kinds, "thought")
		case u.ToolCall != nil:
			kinds = append(kinds, string(u.ToolCall.Kind)+":"+u.ToolCall.Title)
		}
	}
	want2 := "user,thought,edit:Edit /workspace/a.txt,execute:echo hi,agent,user,agent"
	if strings.Join(kinds, ",") != want2 {
		t.Errorf("history = %v, want %s", kinds, want2)
	}
}

func TestHistoryRejectsNonRollout(t *testing.T) {
	if _, err := History(strings.NewReader("{\"type\":\"session_meta\"}\nnot json\n"), HistoryOptions{}); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err = %v, want an error naming line 2", err)
	}
	us, err := History(strings.NewReader(`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"SomethingNew"}}}`), HistoryOptions{})
	if err != nil || len(us) != 0 {
		t.Errorf("unknown item: %v, %v", us, err)
	}
}

func TestShellJoin(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"/bin/bash", "-lc", "echo hi"}, `/bin/bash -lc 'echo hi'`},
		{[]string{"/bin/bash", "-lc", "echo 'x'"}, `/bin/bash -lc 'echo '\''x'\'''`},
		{[]string{"ls", ""}, `ls ''`},
	} {
		if got := shellJoin(tc.argv); got != tc.want {
			t.Errorf("shellJoin(%q) = %s, want %s", tc.argv, got, tc.want)
		}
		if got := UnwrapShellCommand(shellJoin(tc.argv)); len(tc.argv) == 3 && tc.argv[0] == "/bin/bash" && got != tc.argv[2] {
			t.Errorf("unwrap(shellJoin(%q)) = %q", tc.argv, got)
		}
	}
}

// A replayed read shows the read's facts, not the file's content.
func TestHistoryReadWithoutContent(t *testing.T) {
	line := `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"c1","server":"acp","tool":"read_text_file","arguments":{"path":"/w/a.txt"},"status":"completed","result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"content":"secret body\n","hash":"h","total_lines":1}}}}}`
	us, err := History(strings.NewReader(line), HistoryOptions{OwnMCPServer: "acp"})
	if err != nil || len(us) != 1 || us[0].ToolCall == nil {
		t.Fatalf("history = %+v, %v", us, err)
	}
	tc := us[0].ToolCall
	b, _ := json.Marshal(tc)
	if tc.Kind != "read" || strings.Contains(string(b), "secret body") || !strings.Contains(string(b), `"content_bytes":12`) {
		t.Errorf("read tool call = %s", b)
	}
}

// Consecutive thoughts or messages are kept apart, as in a live turn.
func TestHistorySeparatesConsecutiveChunks(t *testing.T) {
	item := func(js string) string {
		return `{"type":"event_msg","payload":{"type":"item_completed","item":` + js + `}}` + "\n"
	}
	in := item(`{"type":"Reasoning","summary_text":["first thought"]}`) +
		item(`{"type":"Reasoning","summary_text":["second thought"]}`) +
		item(`{"type":"AgentMessage","content":[{"type":"Text","text":"one"}]}`) +
		item(`{"type":"AgentMessage","content":[{"type":"Text","text":"two"}]}`)
	us, err := History(strings.NewReader(in), HistoryOptions{})
	if err != nil || len(us) != 4 {
		t.Fatalf("history = %+v, %v", us, err)
	}
	if got := us[1].AgentThoughtChunk.Content.Text.Text; got != "\n\nsecond thought" {
		t.Errorf("second thought = %q", got)
	}
	if got := us[2].AgentMessageChunk.Content.Text.Text; got != "one" {
		t.Errorf("first message = %q", got)
	}
	if got := us[3].AgentMessageChunk.Content.Text.Text; got != "\n\ntwo" {
		t.Errorf("second message = %q", got)
	}
}

// A write shows as the live turn shows it where the rollout has what it
// needs: a created file as a diff from nothing (its content is in the
// arguments); an overwrite keeps its result text (the old text is not there).
func TestHistoryWriteDiff(t *testing.T) {
	diff := []acpsdk.ToolCallContent{acpsdk.ToolDiffContent("/w/a.txt", "hello\n", "bye\n")}
	const (
		overwrote   = `[{"content":{"text":"Overwrote","type":"text"},"type":"content"}]`
		keptDiff    = `[{"newText":"hello\n","oldText":"bye\n","path":"/w/a.txt","type":"diff"}]`
		overwritten = `{"success":true,"created":false,"hash":"h1","total_lines":1}`
	)
	for _, tc := range []struct {
		name, result string
		writes       []KnownWrite
		want         []string // content of each of two identical calls
	}{
		{"created", `{"success":true,"created":true,"hash":"h","total_lines":1}`, nil,
			[]string{`[{"newText":"hello\n","path":"/w/./a.txt","type":"diff"}]`, `[{"newText":"hello\n","path":"/w/./a.txt","type":"diff"}]`}},
		{"overwritten, nothing kept: the result", overwritten, nil, []string{overwrote, overwrote}},
		{"overwritten, the diff kept: once", overwritten, []KnownWrite{{Path: "/w/a.txt", Hash: "h1", Content: diff}}, []string{keptDiff, overwrote}},
		{"kept for each overwrite, in order", overwritten, []KnownWrite{
			{Path: "/w/a.txt", Hash: "h1", Content: diff},
			{Path: "/w/a.txt", Hash: "h1", Content: []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock("second"))}},
		}, []string{keptDiff, `[{"content":{"text":"second","type":"text"},"type":"content"}]`}},
		{"kept for another path or text: the result", overwritten, []KnownWrite{
			{Path: "/w/b.txt", Hash: "h1", Content: diff}, {Path: "/w/a.txt", Hash: "h2", Content: diff},
		}, []string{overwrote, overwrote}},
		{"result without a hash: the result", `{"success":true,"created":false}`, []KnownWrite{{Path: "/w/a.txt", Content: diff}}, []string{overwrote, overwrote}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"c1","server":"acp","tool":"write_text_file","arguments":{"path":"/w/./a.txt","content":"hello\n"},"status":"completed","result":{"content":[{"type":"text","text":"Overwrote"}],"structuredContent":` + tc.result + `}}}}` + "\n"
			us, err := History(strings.NewReader(line+line), HistoryOptions{OwnMCPServer: "acp", Writes: tc.writes})
			if err != nil || len(us) != 2 {
				t.Fatalf("history = %+v, %v", us, err)
			}
			for i, u := range us {
				if u.ToolCall == nil || u.ToolCall.Kind != "edit" {
					t.Fatalf("update %d = %+v", i, u)
				}
				if b, _ := json.Marshal(u.ToolCall.Content); string(b) != tc.want[i] {
					t.Errorf("call %d content = %s, want %s", i, b, tc.want[i])
				}
			}
		})
	}
}

// TestHistoryToolItemsGolden replays web searches, image views, generated
// images and subagent items. search_image_view.jsonl is a real codex 0.169
// rollout (the workspace path replaced); in subagents_images.jsonl the
// SubAgentActivity record is real (multi_agent_v2's spawn_agent), the rest
// is built from codex's TurnItem shapes (no 0.169 run of ours produces
// them: v1 subagent tools are not offered, image generation needs a
// ChatGPT sign-in).
func TestHistoryToolItemsGolden(t *testing.T) {
	for _, name := range []string{"search_image_view", "subagents_images"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "rollout", name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			us, err := History(bytes.NewReader(in), HistoryOptions{OwnMCPServer: "acp"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(marshalUpdates(t, us), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "golden-history", name+".json"), append(got, '\n'), name+".jsonl")
		})
	}
}

// Plan mode's proposed plan replays as the agent's text after the message
// it was part of (codex completes the Plan item first), or where the next
// other item or the end of the rollout comes.
func TestHistoryProposedPlan(t *testing.T) {
	const (
		plan    = `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"Plan","id":"tu-plan","text":"1. Do it.\n"}}}`
		message = `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","id":"m1","content":[{"type":"Text","text":"Here is the plan.\n"}]}}}`
		user    = `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","id":"u1","content":[{"type":"text","text":"go"}]}}}`
	)
	for _, tc := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"after its message", []string{plan, message, user}, []string{"m:Here is the plan.\n", "m:\n\n1. Do it.\n", "u:go"}},
		{"before the next item", []string{plan, user}, []string{"m:1. Do it.\n", "u:go"}},
		{"at the end", []string{message, plan}, []string{"m:Here is the plan.\n", "m:\n\n1. Do it.\n"}},
		// A plan-only turn (no message), then the next turn's plan and its
		// message: both plans kept, each where its turn's items end.
		{"two in a row", []string{plan, strings.Replace(plan, "1. Do it.", "2. Then this.", 1), message},
			[]string{"m:1. Do it.\n", "m:\n\nHere is the plan.\n", "m:\n\n2. Then this.\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			us, err := History(strings.NewReader(strings.Join(tc.lines, "\n")), HistoryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := texts(us); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("history %q, want %q", texts(us), tc.want)
			}
		})
	}
}

// TestHistoryEditShowsDiff: a loaded session shows a file tool's edit as
// ACP diff content, as the live turn did, its old and new text the changed
// region the recorded diff holds (a hunk each), not the diff as text.
func TestHistoryEditShowsDiff(t *testing.T) {
	diff := "--- /w/a.go\n+++ /w/a.go\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -20,2 +20,2 @@\n x\n-y\n\\ No newline at end of file\n+Y\n\\ No newline at end of file\n"
	result, _ := json.Marshal(map[string]any{"path": "/w/a.go", "diff": diff, "hash": "h"})
	line := `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"c1","server":"acp","tool":"edit_text_file",` +
		`"arguments":{"path":"/w/a.go","old_string":"b","new_string":"B"},"status":"completed","result":{"content":[],"structuredContent":` + string(result) + `}}}}` + "\n"
	us, err := History(strings.NewReader(line), HistoryOptions{OwnMCPServer: "acp"})
	if err != nil {
		t.Fatal(err)
	}
	var content []acpsdk.ToolCallContent
	for _, u := range us {
		if u.ToolCall != nil {
			content = u.ToolCall.Content
		}
	}
	want := []acpsdk.ToolCallContent{
		acpsdk.ToolDiffContent("/w/a.go", "a\nB\nc\n", "a\nb\nc\n"),
		acpsdk.ToolDiffContent("/w/a.go", "x\nY", "x\ny"),
	}
	if got, _ := json.Marshal(content); string(got) != mustJSON(t, want) {
		t.Errorf("content = %s\nwant      %s", got, mustJSON(t, want))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHunkContents(t *testing.T) {
	for _, tc := range []struct {
		name, diff string
		want       []acpsdk.ToolCallContent
	}{
		{"no hunk", "", nil},
		{"headers only", "--- a\n+++ a\n", nil},
		{"one hunk", "--- a\n+++ a\n@@ -1,2 +1,2 @@\n-x\n+y\n z\n", []acpsdk.ToolCallContent{acpsdk.ToolDiffContent("a", "y\nz\n", "x\nz\n")}},
		{"a line starting like a header inside a hunk", "@@ -1 +1 @@\n--- x\n+++ y\n",
			[]acpsdk.ToolCallContent{acpsdk.ToolDiffContent("a", "++ y\n", "-- x\n")}},
		{"no final newline on both sides", "@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n",
			[]acpsdk.ToolCallContent{acpsdk.ToolDiffContent("a", "y", "x")}},
	} {
		if got := HunkContents("a", tc.diff); mustJSON(t, got) != mustJSON(t, tc.want) {
			t.Errorf("%s: %s, want %s", tc.name, mustJSON(t, got), mustJSON(t, tc.want))
		}
	}
}
