package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/record"
)

func TestCheckResult(t *testing.T) {
	read := func(result string) *record.Entry {
		return &record.Entry{Kind: record.KindMCPResult, Call: "acp_1", Tool: "read_text_file", Result: json.RawMessage(result)}
	}
	live := func(v any) *mcpsdk.CallToolResult {
		// As the client decodes it: plain JSON values.
		b, _ := json.Marshal(v)
		var decoded any
		json.Unmarshal(b, &decoded)
		return &mcpsdk.CallToolResult{StructuredContent: decoded}
	}
	failed := &mcpsdk.CallToolResult{IsError: true, StructuredContent: map[string]any{"error": map[string]any{"code": -32002, "message": "Permission denied: /w/a", "hint": "h"}}}
	recordedError := &record.Entry{Kind: record.KindMCPResult, Call: "acp_1", Tool: "write_text_file", ToolError: &record.ToolError{Code: -32002, Message: "Permission denied: /w/a", Hint: "h"}}
	tmp := strings.TrimRight(filepath.ToSlash(os.TempDir()), "/")
	tests := []struct {
		name    string
		rec     *record.Entry
		res     *mcpsdk.CallToolResult
		err     error
		differs bool
	}{
		{"same", read(`{"content":"a\n","total_lines":1,"hash":"h1"}`), live(map[string]any{"hash": "h1", "total_lines": 1, "content": "a\n"}), nil, false},
		{"other content", read(`{"content":"a\n","total_lines":1}`), live(map[string]any{"content": "b\n", "total_lines": 1}), nil, true},
		{"other number", read(`{"content":"a\n","total_lines":1}`), live(map[string]any{"content": "a\n", "total_lines": 2}), nil, true},
		{"a field more", read(`{"content":"a\n"}`), live(map[string]any{"content": "a\n", "has_more": false}), nil, true},
		{"same error", recordedError, failed, nil, false},
		{"error instead of a result", read(`{"content":"a\n"}`), failed, nil, true},
		{"result instead of an error", recordedError, live(map[string]any{"success": true}), nil, true},
		{"call failed", read(`{"content":"a\n"}`), nil, errors.New("connection reset"), true},
		{"nothing recorded", nil, live(map[string]any{"content": "b\n"}), nil, false},
		{"no result in the entry", &record.Entry{Kind: record.KindMCPResult, Tool: "x"}, live(1), nil, false},
		{"not recordable", &record.Entry{Kind: record.KindMCPResult, Tool: "x", Error: "result not recordable"}, live(1), nil, false},
		// Volatile parts.
		{"redacted value", read(`{"content":"[REDACTED]","n":1}`), live(map[string]any{"content": "sk-secret", "n": 1}), nil, false},
		{"time", read(`{"content":"a","updatedAt":"2026-01-01T00:00:00Z"}`), live(map[string]any{"content": "a", "updatedAt": "2027-02-02T00:00:00Z"}), nil, false},
		{"temporary directory", read(fmt.Sprintf(`{"message":"cannot write %s/codexacp-123/x"}`, tmp)), live(map[string]any{"message": "cannot write " + tmp + "/codexacp-456/x"}), nil, false},
		{"ids", read(`{"message":"session sess_0123456789abcdef"}`), live(map[string]any{"message": "session sess_fedcba9876543210"}), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := checkResult(tt.rec, tt.res, tt.err)
			if (d != "") != tt.differs {
				t.Fatalf("differs = %v, want %v:\n%s", d != "", tt.differs, d)
			}
			if d != "" && (!strings.Contains(d, "recorded:") || !strings.Contains(d, "replayed:") || !strings.Contains(d, tt.rec.Tool)) {
				t.Errorf("the report does not show both results:\n%s", d)
			}
		})
	}
}

func TestCheckResultShowsALongDifferenceAsDiff(t *testing.T) {
	long := strings.Repeat("line\n", 5000)
	rec := &record.Entry{Kind: record.KindMCPResult, Call: "acp_1", Tool: "read_text_file"}
	rec.Result, _ = json.Marshal(map[string]any{"content": long})
	d := checkResult(rec, &mcpsdk.CallToolResult{StructuredContent: map[string]any{"content": long + "more\n"}}, nil)
	if !strings.Contains(d, "structuredContent.content: the texts differ") || !strings.Contains(d, "--- recorded\n+++ replayed\n") ||
		!strings.Contains(d, "+more\n") || len(d) > maxShownResults {
		t.Errorf("report (%d bytes):\n%.2000s", len(d), d)
	}
}

// TestToolResultMismatchIsReported runs the fake against a real tool server
// with a recorded result the server will not give: the run still plays as
// recorded, and the fake reports the difference in the state directory
// (for the replay harness) and on stderr.
func TestToolResultMismatchIsReported(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "a.txt")
	content := "alpha\n"
	call := func(id string) record.Entry {
		return record.Entry{Kind: record.KindMCPCall, Run: 1, Call: id, Tool: "read_text_file", Arguments: json.RawMessage(`{"path":"` + file + `"}`)}
	}
	result := func(id, text string) record.Entry {
		return record.Entry{Kind: record.KindMCPResult, Run: 1, Call: id, Tool: "read_text_file",
			Result: json.RawMessage(`{"content":` + string(must(json.Marshal(text))) + `,"end_line":1,"has_more":false,"hash":"` + fsops.HashOf([]byte(content)) + `","start_line":1,"total_lines":1}`)}
	}
	f := newFake(t,
		record.Entry{Kind: record.KindCodexStart, Run: 1, Args: []string{"exec", "-"}},
		record.Entry{Kind: record.KindFile, Run: 1, Path: file, Exists: true, ParentExists: true, Mode: 0o644, Content: &content},
		call("acp_1"), result("acp_1", content), // as the server answers
		call("acp_2"), result("acp_2", "ALPHA\n"), // not
		line(1, `{"type":"turn.completed"}`),
		record.Entry{Kind: record.KindCodexExit, Run: 1, Code: code(0)},
	)
	f.env[EnvRoot] = root
	_, cfg := serveTools(t, f)
	o := f.run("exec "+cfg+" -", "")
	if o.code != 0 {
		t.Fatalf("exit %d, stderr %q", o.code, o.stderr)
	}
	if o.stdout.String() != "{\"type\":\"turn.completed\"}\n" {
		t.Errorf("stdout = %q", o.stdout)
	}
	reports, _ := filepath.Glob(filepath.Join(f.state, ResultMismatchPrefix+"*"))
	// The second call is the transcript's entry 5 (after start, codex_start,
	// file, call, result).
	if want := filepath.Join(f.state, ResultMismatchPrefix+"5"); len(reports) != 1 || reports[0] != want {
		t.Fatalf("reports = %q, want [%s]", reports, want)
	}
	b, err := os.ReadFile(reports[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"transcript line 6", "call acp_2", "recorded:", `"content": "ALPHA\n"`, "replayed:", `"content": "alpha\n"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("report lacks %q:\n%s", s, b)
		}
	}
	if !strings.Contains(o.stderr.String(), "differs from the recording") {
		t.Errorf("stderr = %q", o.stderr)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
