package record

import (
	"bytes"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/codex/appserver"
)

// The sign-in page of an MCP server's OAuth login (codex's answer to
// mcpServer/oauth/login) is replaced in that answer and wherever the agent
// shows it later: the elicitation/create that hands it to the editor, as
// the SDK escapes it (& as \u0026), and agent text.
func TestAuthorizationURLRedacted(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf)
	r.SetBackend(BackendAppServer)
	r.Start("codexacp test", 0)
	trace := r.AppServerTrace(appserver.Options{})
	const page = `http://127.0.0.1:4000/authorize?response_type=code&client_id=c1&state=st4te-value&code_challenge=ch4llenge`
	trace(true, []byte(`{"id":1,"method":"initialize","params":{}}`))
	trace(true, []byte(`{"id":2,"method":"mcpServer/oauth/login","params":{"name":"vault","timeoutSecs":300}}`))
	trace(false, []byte(`{"id":2,"result":{"authorizationUrl":"`+page+`","loginId":"L1"}}`))
	escaped := strings.ReplaceAll(page, "&", `\u0026`)
	r.acpLine(DirOut, []byte(`{"jsonrpc":"2.0","id":5,"method":"elicitation/create","params":{"sessionId":"s","mode":"url","url":"`+escaped+`","elicitationId":"e","message":"Sign in"}}`))
	r.acpLine(DirOut, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"open <`+escaped+`>"}}}}`))
	out := buf.String()
	for _, leak := range []string{"st4te-value", "ch4llenge"} {
		if strings.Contains(out, leak) {
			t.Errorf("the transcript shows %q:\n%s", leak, out)
		}
	}
	if n := strings.Count(out, Redacted); n != 3 {
		t.Errorf("%d redactions, want 3 (the answer, the elicitation, the text):\n%s", n, out)
	}
	if !strings.Contains(out, `"loginId":"L1"`) {
		t.Errorf("the rest of the answer is lost:\n%s", out)
	}
}
