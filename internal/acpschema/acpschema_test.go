package acpschema

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateSessionUpdate(t *testing.T) {
	tests := []struct {
		name    string
		update  string
		wantErr string // substring; "" means valid
	}{
		{"tool call", `{"sessionUpdate":"tool_call","toolCallId":"a","title":"ls","kind":"execute","status":"in_progress"}`, ""},
		{"tool call update", `{"sessionUpdate":"tool_call_update","toolCallId":"a","status":"completed","rawOutput":{"x":1}}`, ""},
		{"diff content", `{"sessionUpdate":"tool_call","toolCallId":"a","title":"Edit","kind":"edit","content":[{"type":"diff","path":"/w/a","oldText":null,"newText":"x"}]}`, ""},
		{"message chunk", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}`, ""},
		{"plan", `{"sessionUpdate":"plan","entries":[{"content":"a","priority":"medium","status":"in_progress"}]}`, ""},
		{"usage update is unstable", `{"sessionUpdate":"usage_update","used":10,"size":100}`, ""},
		{"kind write does not exist", `{"sessionUpdate":"tool_call","toolCallId":"a","title":"x","kind":"write"}`, "ToolKind"},
		{"bad status", `{"sessionUpdate":"tool_call_update","toolCallId":"a","status":"done"}`, "ToolCallStatus"},
		{"tool call without title", `{"sessionUpdate":"tool_call","toolCallId":"a"}`, "title"},
		{"text block without text", `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text"}}`, "ContentBlock"},
		{"null plan entries", `{"sessionUpdate":"plan","entries":null}`, "entries"},
		{"negative usage", `{"sessionUpdate":"usage_update","used":-1,"size":100}`, "minimum"},
		{"seed shape", `{"type":"toolCall","toolCallId":"a","title":"x"}`, "0 \"sessionUpdate\" members"},
		{"two discriminators", `{"sessionUpdate":"plan","sessionUpdate":"plan","entries":[]}`, "2 \"sessionUpdate\" members"},
		{"unknown variant", `{"sessionUpdate":"tool_call_progress","toolCallId":"a"}`, "unknown sessionUpdate"},
		{"not an object", `["plan"]`, "not a JSON object"},
		{"not JSON", `{"sessionUpdate":`, "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, ValidateSessionUpdate([]byte(tt.update)), tt.wantErr)
		})
	}
}

func TestValidateMessage(t *testing.T) {
	tests := []struct {
		name    string
		msg     string
		wantErr string
	}{
		{"session update", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, ""},
		{"unstable session update", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"usage_update","used":1,"size":2}}}`, ""},
		{"session update without session", `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"plan","entries":[]}}}`, "sessionId"},
		{"session update with bad update", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"a","title":"x","kind":"write"}}}`, "ToolKind"},
		{"request", `{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/w/a.txt"}}`, ""},
		{"request missing param", `{"jsonrpc":"2.0","id":3,"method":"fs/write_text_file","params":{"sessionId":"s1","path":"/w/a.txt"}}`, "content"},
		{"notification", `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`, ""},
		// Unstable only; a form elicitation is scoped to a session or a request.
		{"elicitation", `{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"sessionId":"s1","mode":"form","message":"?","requestedSchema":{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x","title":"X"}]}}}}}`, ""},
		{"elicitation without scope", `{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"mode":"form","message":"?","requestedSchema":{"type":"object","properties":{}}}}`, "CreateElicitationRequest"},
		{"elicitation with a bad field", `{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"sessionId":"s1","mode":"form","message":"?","requestedSchema":{"type":"object","properties":{"a":{"type":"text"}}}}}`, "oneOf"},
		{"extension method", `{"jsonrpc":"2.0","id":1,"method":"_codexacp/x","params":{"a":1}}`, ""},
		{"extension method with array params", `{"jsonrpc":"2.0","id":1,"method":"_codexacp/x","params":[1]}`, "object"},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"session/frobnicate","params":{}}`, "unknown ACP request method"},
		{"response", `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`, ""},
		{"error response", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`, ""},
		{"error without message", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603}}`, "message"},
		{"response with result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, "exactly one"},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, "without id"},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"result":{}}`, "jsonrpc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, ValidateMessage([]byte(tt.msg)), tt.wantErr)
		})
	}
}

func TestValidateResponse(t *testing.T) {
	tests := []struct {
		method, msg, wantErr string
	}{
		{"session/prompt", `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"cancelled"}}`, ""},
		{"session/prompt", `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"done"}}`, "StopReason"},
		{"session/prompt", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}`, ""},
		{"session/new", `{"jsonrpc":"2.0","id":1,"result":{}}`, "sessionId"},
		{"session/prompt", `{"jsonrpc":"2.0","method":"session/update","params":{}}`, "not a response"},
		{"nes/frob", `{"jsonrpc":"2.0","id":1,"result":{}}`, "unknown ACP response method"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.msg, func(t *testing.T) {
			checkErr(t, ValidateResponse(tt.method, []byte(tt.msg)), tt.wantErr)
		})
	}
}

func TestValidateDefinition(t *testing.T) {
	checkErr(t, ValidateDefinition("ToolCallContent", []byte(`{"type":"diff","path":"/a","newText":"x"}`)), "")
	checkErr(t, ValidateDefinition("ToolCallContent", []byte(`{"type":"diff","path":"/a"}`)), "ToolCallContent")
	checkErr(t, ValidateDefinition("UsageUpdate", []byte(`{"used":1,"size":2}`)), "") // unstable only
	checkErr(t, ValidateDefinition("NoSuchThing", []byte(`{}`)), "no definition")
}

// TestEmbeddedSchemaMatchesModule keeps the embedded copies equal to the
// schema files of the acp-go-sdk version in go.mod.
func TestEmbeddedSchemaMatchesModule(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/coder/acp-go-sdk").Output()
	if err != nil {
		t.Fatalf("go list acp-go-sdk: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		t.Fatal("go list gave no directory for github.com/coder/acp-go-sdk (module not downloaded?)")
	}
	for name, embedded := range map[string][]byte{"schema.json": stableJSON, "schema.unstable.json": unstableJSON} {
		want, err := os.ReadFile(filepath.Join(dir, "schema", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(embedded, want) {
			t.Errorf("testdata/%s differs from the module's schema/%s: copy it again", name, name)
		}
	}
}

func BenchmarkValidateSessionUpdate(b *testing.B) {
	u := []byte(`{"sessionUpdate":"tool_call","toolCallId":"a","title":"ls","kind":"execute","status":"in_progress","rawInput":{"command":"ls"}}`)
	for b.Loop() {
		if err := ValidateSessionUpdate(u); err != nil {
			b.Fatal(err)
		}
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Errorf("no error, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("error %q does not contain %q", err, want)
	}
}
