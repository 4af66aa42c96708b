package e2e_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/record"
)

// TestRecordHidesWhatAUserWouldNotPost records a session with the real
// codex, an editor MCP server given an API key as an argument and a
// database URL in its environment, a variable of the user's own in the
// agent's environment, and the home folder and codex's installation id
// that codex itself writes about (app-server's remoteControl status names
// the machine and the installation): none of them is in the transcript
// (issue 28), and the transcript is still recognisable (placeholders).
func TestRecordHidesWhatAUserWouldNotPost(t *testing.T) {
	eachBackend(t, testRecordHidesWhatAUserWouldNotPost)
}

func testRecordHidesWhatAUserWouldNotPost(t *testing.T, backend string) {
	const (
		apiKey  = "trk_live_e2eplantedkey0001"
		dbURL   = "postgres://app:e2e-db-pw-0002@db.internal/app"
		userVar = "I28_PLANTED_USER_VARIABLE"
	)
	t.Setenv(userVar, "planted")
	transcript := filepath.Join(t.TempDir(), "session.ndjson")
	e := start(t, setup{backend: backend, fs: true, args: []string{"--record", transcript}})
	root := filepath.Dir(e.cwd)
	srv := fixtureServer(t, root, filepath.Join(root, "notes.log"))
	srv.Stdio.Args = []string{"--api-key", apiKey, "--verbose"}
	srv.Stdio.Env = append(srv.Stdio.Env, acpsdk.EnvVariable{Name: "DATABASE_URL", Value: dbURL})
	resp, err := e.editor.Conn.NewSession(e.ctx, acpsdk.NewSessionRequest{Cwd: e.cwd, McpServers: []acpsdk.McpServer{srv}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	e.session = resp.SessionId
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("hello")))
	e.mustPrompt("say hello")
	e.stop()

	data, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(e.codexHome, "user") // the agent's HOME (codextest.Env)
	private := map[string]string{"the MCP server's API key": apiKey, "the MCP server's env value": dbURL,
		"the home folder": home, "a variable's name of the user": userVar}
	if id, err := os.ReadFile(filepath.Join(e.codexHome, "installation_id")); err == nil && len(bytes.TrimSpace(id)) > 0 {
		private["codex's installation id"] = string(bytes.TrimSpace(id))
	}
	if host, err := os.Hostname(); err == nil {
		private["the host name as serverName"] = `"serverName":"` + host + `"`
	}
	for what, s := range private {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("%s (%s) is in the transcript", what, s)
		}
	}
	keep := []string{`"--api-key","[REDACTED]","--verbose"`, `"DATABASE_URL","value":"[REDACTED]"`, record.HomePlaceholder + "/.cache/codexacp/"}
	if backend == "app-server" {
		// Codex 0.169+ reports its remote control status with the machine
		// and the installation.
		keep = append(keep, `"serverName":"[HOST]"`, `"installationId":"[INSTALLATION_ID]"`)
	}
	for _, s := range keep {
		if !bytes.Contains(data, []byte(s)) {
			t.Errorf("the transcript lacks %s", s)
		}
	}
	if findings := record.Check(data, record.Machine{Home: home}); len(findings) > 0 {
		var lines []string
		for _, f := range findings {
			lines = append(lines, f.String())
		}
		t.Errorf("record scrub --check finds things to hide:\n%s", strings.Join(lines, "\n"))
	}
	if t.Failed() {
		t.Logf("transcript:\n%s", data)
	}
	names := make([]string, 0, len(private))
	for what := range private {
		names = append(names, what)
	}
	t.Logf("checked: %s", strings.Join(names, ", "))
}
