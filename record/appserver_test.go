package record

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/mcp"
)

// TestAppServerTrace records two app-server processes, the first of which
// dies (its stdout ends without the agent closing its stdin), with a tool
// call during each and one between them.
func TestAppServerTrace(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf)
	r.SetBackend(BackendAppServer)
	r.Start("codexacp test", 0)
	trace := r.AppServerTrace(appserver.Options{
		Config: []string{`model="gpt-5.5"`, `model_providers.p={base_url="http://x", http_headers={"Authorization"="Bearer abcdefgh12345678"}}`},
		Env:    []string{"PATH=/bin", "CODEX_HOME=/h", "PATH=/usr/bin"},
	})
	obs := r.ToolObserver("s", nil, nil)
	tool := func(id string) {
		c := &mcp.Call{ID: id, Tool: "read_text_file", Arguments: json.RawMessage(`{}`)}
		obs.CallStarted(context.Background(), c)
		obs.CallFinished(context.Background(), c, struct{}{}, nil)
	}
	send := func(s string) { trace(true, []byte(s)) }
	recv := func(s string) { trace(false, []byte(s)) }

	send(`{"id":1,"method":"initialize","params":{}}`)
	recv(`{"id":1,"result":{"userAgent":"codex"}}`)
	send(`{"method":"initialized"}`)
	recv(`{"id":0,"method":"item/commandExecution/requestApproval","params":{"threadId":"t"}}`)
	send(`{"id":0,"result":{"decision":"accept"}}`)
	tool("c1")
	recv(`warning: not JSON`)
	trace(false, nil) // it died
	trace(true, nil)  // Close after it died: nothing to record
	tool("c2")
	send(`{"id":1,"method":"initialize","params":{}}`)
	tool("c3")
	trace(true, nil)
	trace(false, nil)

	entries := readAll(t, buf.Bytes())
	if entries[0].Backend != BackendAppServer {
		t.Errorf("start backend = %q", entries[0].Backend)
	}
	var got []string
	for _, e := range entries[1:] {
		s := e.Kind
		if e.Kind == KindAppServer {
			s += " " + e.Dir
			switch {
			case e.EOF:
				s += " eof"
			case e.Text != "":
				s += " text " + e.Text
			default:
				s += " " + string(e.Msg)
			}
		}
		if e.Kind == KindMCPCall || e.Kind == KindMCPResult {
			s += " " + e.Call
		}
		got = append(got, s+" run "+string(rune('0'+e.Run)))
	}
	want := []string{
		`appserver_start run 1`,
		`appserver out {"id":1,"method":"initialize","params":{}} run 1`,
		`appserver in {"id":1,"result":{"userAgent":"codex"}} run 1`,
		`appserver out {"method":"initialized"} run 1`,
		`appserver in {"id":0,"method":"item/commandExecution/requestApproval","params":{"threadId":"t"}} run 1`,
		`appserver out {"id":0,"result":{"decision":"accept"}} run 1`,
		`mcp_call c1 run 1`,
		`mcp_result c1 run 1`,
		`appserver in text warning: not JSON run 1`,
		`appserver in eof run 1`,
		`mcp_call c2 run 0`,
		`mcp_result c2 run 0`,
		`appserver_start run 2`,
		`appserver out {"id":1,"method":"initialize","params":{}} run 2`,
		`mcp_call c3 run 2`,
		`mcp_result c3 run 2`,
		`appserver out eof run 2`,
		`appserver in eof run 2`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	start := entries[1]
	if a := strings.Join(start.Args, " "); a != `app-server -c model="gpt-5.5" -c model_providers.p={base_url="http://x", http_headers={"Authorization"="[REDACTED]"}}` {
		t.Errorf("args = %s", a)
	}
	if e := strings.Join(start.Env, ","); e != "CODEX_HOME" { // PATH: not codex's own
		t.Errorf("env names = %s", e)
	}
}

// TestRedactLearning: what is blanked in a message the agent sends codex,
// and which values the recorder learns to replace everywhere.
func TestRedactLearning(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // "" : unchanged
		learned []string
	}{
		{"clean", `{"id":3,"method":"turn/start","params":{"input":[{"type":"text","text":"hi"}]}}`, "", nil},
		{"our token", `{"config":{"mcp_servers.acp":{"http_headers":{"Authorization":"Bearer tok12345678"},"url":"u"}}}`,
			`{"config":{"mcp_servers.acp":{"http_headers":{"Authorization":"[REDACTED]"},"url":"u"}}}`,
			[]string{"Bearer tok12345678", "tok12345678"}},
		{"any header of a config", `{"http_headers":{"X-Workspace":"ws-12345678"}}`, `{"http_headers":{"X-Workspace":"[REDACTED]"}}`, []string{"ws-12345678"}},
		{"any header of an ACP server", `{"headers":[{"name":"X-Workspace","value":"ws-12345678"}]}`,
			`{"headers":[{"name":"X-Workspace","value":"[REDACTED]"}]}`, []string{"ws-12345678"}},
		{"env of a stdio server", `{"env":{"API_KEY":"k-12345678","MODE":"fast"}}`, `{"env":{"API_KEY":"[REDACTED]","MODE":"fast"}}`, []string{"k-12345678"}},
		{"name/value pair", `{"name":"DB_PASSWORD","value":"pw"}`, `{"name":"DB_PASSWORD","value":"[REDACTED]"}`, []string{"pw"}},
		{"variable names stay", `{"bearer_token_env_var":"CODEXACP_MCP_TOKEN","env_key":"OPENAI_API_KEY"}`, "", nil},
		{"already redacted", `{"apiKey":"[REDACTED]"}`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, learned := redactLearning(json.RawMessage(tt.in))
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if string(got) != want {
				t.Errorf("redacted = %s\nwant       %s", got, want)
			}
			if strings.Join(learned, "|") != strings.Join(tt.learned, "|") {
				t.Errorf("learned %q, want %q", learned, tt.learned)
			}
		})
	}
}

// The agent's answers to codex's secret questions are blanked in its reply,
// however short, and the long ones wherever else they appear; other answers
// and other replies stay.
func TestAppServerTraceSecretAnswers(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf)
	r.Start("codexacp test", 0)
	trace := r.AppServerTrace(appserver.Options{Env: []string{}})
	send := func(s string) { trace(true, []byte(s)) }
	recv := func(s string) { trace(false, []byte(s)) }
	send(`{"id":1,"method":"initialize","params":{}}`)
	recv(`{"id":4,"method":"item/tool/requestUserInput","params":{"itemId":"c","questions":[` +
		`{"id":"pin","question":"PIN?","isSecret":true},{"id":"key","question":"Key?","isSecret":true},{"id":"lang","question":"Language?","isSecret":false}]}}`)
	recv(`{"id":5,"method":"item/tool/requestUserInput","params":{"itemId":"d","questions":[{"id":"pin","question":"Again?","isSecret":false}]}}`)
	send(`{"id":5,"result":{"answers":{"pin":{"answers":["4321"]}}}}`)
	send(`{"id":4,"result":{"answers":{"pin":{"answers":["1234"]},"key":{"answers":["hunter2hunter2","<b>&"]},"lang":{"answers":["French"]}}}}`)
	recv(`{"method":"item/completed","params":{"text":"your key is hunter2hunter2"}}`)
	send(`{"id":4,"result":{"answers":{"pin":{"answers":["5678"]}}}}`) // the question was answered: not its reply

	var got []string
	for _, e := range readAll(t, buf.Bytes()) {
		if e.Kind == KindAppServer {
			got = append(got, string(e.Msg))
		}
	}
	want := []string{
		`{"id":1,"method":"initialize","params":{}}`,
		`{"id":4,"method":"item/tool/requestUserInput","params":{"itemId":"c","questions":[` +
			`{"id":"pin","question":"PIN?","isSecret":true},{"id":"key","question":"Key?","isSecret":true},{"id":"lang","question":"Language?","isSecret":false}]}}`,
		`{"id":5,"method":"item/tool/requestUserInput","params":{"itemId":"d","questions":[{"id":"pin","question":"Again?","isSecret":false}]}}`,
		`{"id":5,"result":{"answers":{"pin":{"answers":["4321"]}}}}`,
		`{"id":4,"result":{"answers":{"key":{"answers":["[REDACTED]","[REDACTED]"]},"lang":{"answers":["French"]},"pin":{"answers":["[REDACTED]"]}}}}`,
		`{"method":"item/completed","params":{"text":"your key is [REDACTED]"}}`,
		`{"id":4,"result":{"answers":{"pin":{"answers":["5678"]}}}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("recorded:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
