package e2e_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/codextest"
	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/acpschema"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/syncbuf"
)

// authAgent starts codexacp with the pinned codex and OpenAI's own provider
// (no custom provider: the harness's start configures the mock one), in an
// empty CODEX_HOME, without API keys unless extraEnv has them. OpenAI's
// base URL is the mock, so a turn never leaves loopback.
func authAgent(t *testing.T, mock *mockapi.Server, extraEnv ...string) (*fakeeditor.Editor, context.Context, string) {
	t.Helper()
	codexPath := codextest.Binary(t)
	env, _ := codextest.Env(t) // no CODEX_* or OPENAI_* of the test's environment
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--codex-path", codexPath, "--log-level", "debug", "--state-dir", "",
		"-c", `model="gpt-5.5"`, "-c", "openai_base_url=" + mock.URL()}
	for _, c := range codextest.OfflineConfig {
		args = append(args, "-c", c)
	}
	cmd := exec.Command(agentBin, args...)
	cmd.Env = append(env, extraEnv...)
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	ed := fakeeditor.Connect(stdin, stdout, fakeeditor.Options{FS: true})
	t.Cleanup(func() {
		cancel()
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("codexacp: %v", err)
		}
		for _, raw := range ed.Raw() {
			if err := acpschema.ValidateMessage(raw); err != nil {
				t.Errorf("agent message violates the ACP schema: %v\n%s", err, raw)
			}
		}
		if t.Failed() {
			t.Logf("codexacp stderr:\n%s", stderr.String())
		}
	})
	return ed, ctx, cwd
}

func authMethodIDs(methods []acpsdk.AuthMethod) string {
	var ids []string
	for _, m := range methods {
		switch {
		case m.Agent != nil:
			ids = append(ids, m.Agent.Id)
		case m.Terminal != nil:
			ids = append(ids, m.Terminal.Id)
		case m.EnvVar != nil:
			ids = append(ids, m.EnvVar.Id)
		}
	}
	return strings.Join(ids, ",")
}

// TestAuthRequiredWithoutCredentials: the real codex, not logged in, no API
// key, no custom provider: initialize offers the three methods, session/new
// answers auth_required saying what to do, and authenticate tells why each
// method does not work yet.
func TestAuthRequiredWithoutCredentials(t *testing.T) {
	mock := mockapi.New(t)
	ed, ctx, cwd := authAgent(t, mock)
	init, err := ed.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := authMethodIDs(init.AuthMethods); got != "chatgpt,openai-api-key,codex-api-key" {
		t.Errorf("authMethods = %s", got)
	}
	_, err = ed.Conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || re.Code != -32000 {
		t.Fatalf("session/new = %v, want auth_required (-32000)", err)
	}
	for _, w := range []string{"codex login", "OPENAI_API_KEY", "agent_servers"} {
		if !strings.Contains(re.Message, w) {
			t.Errorf("auth_required message %q lacks %q", re.Message, w)
		}
	}
	for method, want := range map[string]string{
		"chatgpt":        "Run `codex login` in a terminal",
		"openai-api-key": "OPENAI_API_KEY is not set",
		"codex-api-key":  "CODEX_API_KEY is not set",
	} {
		_, err := ed.Conn.Authenticate(ctx, acpsdk.AuthenticateRequest{MethodId: method})
		if !errors.As(err, &re) || re.Code != -32000 || !strings.Contains(re.Message, want) {
			t.Errorf("authenticate %s = %v, want -32000 with %q", method, err, want)
		}
	}
	if n := len(mock.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
}

// TestAuthWithOpenAIAPIKey: with OPENAI_API_KEY in the agent's environment
// authenticate succeeds, session/new works, and the turn reaches the model
// with the key (codex exec reads it as CODEX_API_KEY).
func TestAuthWithOpenAIAPIKey(t *testing.T) {
	mock := mockapi.New(t)
	const key = "sk-e2e-not-a-real-key"
	ed, ctx, cwd := authAgent(t, mock, "OPENAI_API_KEY="+key)
	if _, err := ed.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ed.Conn.Authenticate(ctx, acpsdk.AuthenticateRequest{MethodId: "openai-api-key"}); err != nil {
		t.Fatalf("authenticate openai-api-key: %v", err)
	}
	sess, err := ed.Conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	mock.Enqueue(mockapi.Reply(mockapi.Message("signed in")))
	resp, err := ed.Conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sess.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hello")}})
	if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", resp, err)
	}
	reqs := mock.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was not asked")
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("Authorization = %q, want the key from OPENAI_API_KEY", got)
	}
}
