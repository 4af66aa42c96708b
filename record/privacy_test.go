package record

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/execrun"
)

// TestMachineNeverReachesTheTranscript plants what a user would not post
// but is no secret (issue 28): the home folder, the machine's name,
// codex's installation id, the names of the user's environment variables
// and other workspaces' sessions in a session/list. None reaches the file;
// the placeholders do, where a replay needs a path.
func TestMachineNeverReachesTheTranscript(t *testing.T) {
	const (
		host   = "alice-workstation-7"
		instID = "110424a3-5b7c-4d2e-9f10-abcdef012345"
		other  = "/srv/secret-project"
	)
	home := filepath.Join(t.TempDir(), "alice")
	codexHome := filepath.Join(home, ".codex")
	state := filepath.Join(home, ".local", "state", "codexacp")
	workspace := filepath.Join(home, "proj")
	for _, d := range []string{codexHome, filepath.Join(state, "sessions"), workspace} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(codexHome, installationIDFile), []byte(instID+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	records := map[string]string{
		"sess_mine":  `{"sessionId":"sess_mine","threadId":"t1","cwd":"` + workspace + `","title":"my work"}`,
		"sess_other": `{"sessionId":"sess_other","threadId":"t2","cwd":"` + other + `","title":"the merger plan"}`,
	}
	for id, content := range records {
		if err := os.WriteFile(filepath.Join(state, "sessions", id+".json"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	var buf bytes.Buffer
	r := New(&buf)
	r.SetDirs(state, codexHome)
	r.SetMachine(home, host)
	r.Start("codexacp test", 0)

	in := io.MultiReader(strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"`+workspace+`","mcpServers":[]}}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`+"\n"), strings.NewReader(""))
	io.ReadAll(r.Input(in))
	out := r.Output(io.Discard)
	fmt.Fprintf(out, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess_new"}}`+"\n")
	// The agent reads every record to answer a list without a cwd.
	r.Stored(filepath.Join(state, "sessions", "sess_mine.json"))
	r.Stored(filepath.Join(state, "sessions", "sess_other.json"))
	fmt.Fprintf(out, `{"jsonrpc":"2.0","id":2,"result":{"sessions":[{"sessionId":"sess_mine","cwd":%q,"title":"my work"},{"sessionId":"sess_other","cwd":%q,"title":"the merger plan"}]}}`+"\n", workspace, other)

	command := func(inv execrun.Invocation) ([]string, []string) {
		return []string{"exec", "-C", inv.Cwd, "-c", `model_catalog_json="` + home + `/.cache/codexacp/catalog.json"`, "-"},
			[]string{"GITHUB_TOKEN=x", "DATABASE_URL=y", "HOME=" + home, "CODEX_HOME=" + codexHome}
	}
	runner := &fakeRunner{lines: []string{`{"type":"item.completed","item":{"type":"command_execution","aggregated_output":"` + host + `:~$ ls ` + home + `/proj\n"}}`}}
	r.Backend(runner, command).Run(context.Background(), execrun.Invocation{Cwd: workspace, Prompt: "hi"}, func([]byte) {})

	trace := r.AppServerTrace(appserver.Options{Env: []string{"AWS_PROFILE=corp", "OPENAI_API_KEY=k"}})
	trace(true, []byte(`{"id":1,"method":"initialize","params":{}}`))
	trace(false, []byte(`{"method":"remoteControl/status/changed","params":{"status":"disabled","serverName":"vm","installationId":"7e7e7e7e-0000-4000-8000-000000000001","environmentId":null}}`))
	trace(false, []byte(`{"method":"warning","params":{"message":"installation 7e7e7e7e-0000-4000-8000-000000000001 on `+host+`"}}`))

	text := buf.String()
	for _, private := range []string{home, host, instID, "7e7e7e7e-0000-4000-8000-000000000001", `"serverName":"vm"`,
		"GITHUB_TOKEN", "DATABASE_URL", "AWS_PROFILE", `"HOME"`, other, "the merger plan", "sess_other"} {
		if strings.Contains(text, private) {
			t.Errorf("%q is in the transcript:\n%s", private, text)
		}
	}
	for _, keep := range []string{`"cwd":"$HOME/proj"`, `model_catalog_json=\"$HOME/.cache/codexacp/catalog.json\"`,
		`"path":"$CODEXACP_STATE/sessions/sess_mine.json"`, `"title":"my work"`, `"env":["CODEX_HOME"]`, `"env":["OPENAI_API_KEY"]`,
		`"serverName":"[HOST]"`, `"installationId":"[INSTALLATION_ID]"`, `installation [INSTALLATION_ID] on [HOST]`, `[HOST]:~$ ls $HOME/proj`} {
		if !strings.Contains(text, keep) {
			t.Errorf("transcript lacks %s:\n%s", keep, text)
		}
	}
	entries := readAll(t, buf.Bytes())
	stored := 0
	for _, e := range entries {
		if e.Kind == KindStored {
			stored++
		}
	}
	if stored != 1 {
		t.Errorf("%d stored records, want only this workspace's", stored)
	}
}

// TestSessionListKeepsTheLoadedSession: a record read for a load is kept
// whatever its cwd, and a list before any workspace is known keeps none.
func TestSessionListKeepsTheLoadedSession(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "sess_a.json")
	os.WriteFile(rec, []byte(`{"sessionId":"sess_a","cwd":"/elsewhere"}`), 0o600)
	var buf bytes.Buffer
	r := New(&buf)
	r.Start("codexacp test", 0)
	io.ReadAll(r.Input(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"sess_a","cwd":"/w","mcpServers":[]}}` + "\n")))
	r.Stored(rec) // for the load, while the list is unanswered
	out := r.Output(io.Discard)
	fmt.Fprintln(out, `{"jsonrpc":"2.0","id":1,"result":{"sessions":[{"sessionId":"sess_a","cwd":"/elsewhere"}]}}`)
	entries := readAll(t, buf.Bytes())
	if got := kinds(entries); got != "start,acp:in,acp:in,acp:in:eof,stored,acp:out" {
		t.Fatalf("entries = %s", got)
	}
	if msg := string(entries[len(entries)-1].Msg); !strings.Contains(msg, `"sessions":[]`) {
		t.Errorf("list answer = %s, want no session of another workspace", msg)
	}
}

func TestRedactMCPConfigArg(t *testing.T) {
	tests := []struct{ in, want string }{
		{`mcp_servers.t={command="t", args=["--api-key", "k1234567", "-v"], env={"URL"="u", "TOKEN"='t'}}`,
			`mcp_servers.t={command="t", args=["--api-key", "[REDACTED]", "-v"], env={"URL"="[REDACTED]", "TOKEN"="[REDACTED]"}}`},
		{`mcp_servers.t.args=["--token=abc", "PASSWORD=p", "--keep", "x"]`, `mcp_servers.t.args=["--token=[REDACTED]", "PASSWORD=[REDACTED]", "--keep", "x"]`},
		{`mcp_servers.t.env={A="1"}`, `mcp_servers.t.env={A="[REDACTED]"}`},
		{`mcp_servers.t.env.A="1"`, `mcp_servers.t.env.A="[REDACTED]"`},
		{`mcp_servers.t={command="t", args=["--port", "80"]}`, `mcp_servers.t={command="t", args=["--port", "80"]}`},
		{`mcp_servers.acp={url="http://x", bearer_token_env_var="CODEXACP_MCP_TOKEN"}`, `mcp_servers.acp={url="http://x", bearer_token_env_var="CODEXACP_MCP_TOKEN"}`},
		{`model="gpt"`, `model="gpt"`},
		// A flag whose next argument is another flag has no value to hide.
		{`mcp_servers.t.args=["--token", "--verbose"]`, `mcp_servers.t.args=["--token", "--verbose"]`},
	}
	for _, tt := range tests {
		var learned []string
		if got := redactMCPConfigArg(tt.in, func(s string) { learned = append(learned, s) }); got != tt.want {
			t.Errorf("redactMCPConfigArg(%s)\n = %s\nwant %s", tt.in, got, tt.want)
		}
		for _, s := range learned {
			if s == "u" || s == "1" {
				t.Errorf("%s: learned %q, a value under a name that does not look secret", tt.in, s)
			}
		}
	}
}

func TestSummariseInstructions(t *testing.T) {
	long := strings.Repeat("Read files with the acp tools.\n", 40)
	arg := summariseConfigArg(`developer_instructions="` + strings.ReplaceAll(long, "\n", `\n`) + `"`)
	if !strings.HasPrefix(arg, `developer_instructions="[instructions: 1240 bytes, 41 lines, sha256 `) {
		t.Errorf("summarised arg = %s", arg)
	}
	if got := summariseConfigArg(`developer_instructions="short"`); got != `developer_instructions="short"` {
		t.Errorf("short instructions = %s", got)
	}
	msg := summariseInstructions([]byte(`{"id":2,"method":"thread/start","params":{"cwd":"/w","developerInstructions":` + fmt.Sprintf("%q", long) + `}}`))
	if bytes.Contains(msg, []byte("Read files")) || !bytes.Contains(msg, []byte(`"cwd":"/w"`)) {
		t.Errorf("thread/start = %s", msg)
	}
}
