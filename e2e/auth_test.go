package e2e_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/codextest"
	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/syncbuf"
)

// authAgent starts codexacp with the pinned codex and OpenAI's own provider
// (no custom provider: the harness's start configures the mock one), in an
// empty CODEX_HOME, without API keys unless extraEnv has them. OpenAI's
// base URL is the mock, so a turn never leaves loopback.
func authAgent(t *testing.T, mock *mockapi.Server, extraEnv ...string) (*fakeeditor.Editor, context.Context, string) {
	t.Helper()
	ed, ctx, cwd, _ := authAgentOn(t, "exec", mock, extraEnv...)
	return ed, ctx, cwd
}

// authAgentOn is authAgent on the given backend; it also returns codex's
// home.
func authAgentOn(t *testing.T, backend string, mock *mockapi.Server, extraEnv ...string) (*fakeeditor.Editor, context.Context, string, string) {
	t.Helper()
	return authAgentAfter(t, backend, mock, nil, extraEnv...)
}

// authAgentAfter is authAgentOn with before run first, given codex's
// environment (its CODEX_HOME is the agent's).
func authAgentAfter(t *testing.T, backend string, mock *mockapi.Server, before func(env []string), extraEnv ...string) (*fakeeditor.Editor, context.Context, string, string) {
	t.Helper()
	codexPath := codextest.Binary(t)
	env, home := codextest.Env(t) // no CODEX_* or OPENAI_* of the test's environment
	if before != nil {
		before(env)
	}
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--codex-path", codexPath, "--backend", backend, "--log-level", "debug", "--state-dir", "",
		"-c", `model="gpt-5.5"`, "-c", "openai_base_url=" + mock.URL()}
	for _, c := range codextest.OfflineConfig {
		args = append(args, "-c", c)
	}
	cmd := exec.Command(agentBin(t), args...)
	cmd.Env = append(env, extraEnv...)
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	stdin, stdout := startPiped(t, cmd)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	ed := fakeeditor.Connect(stdin, stdout, fakeeditor.Options{FS: true})
	t.Cleanup(func() {
		cancel()
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("codexacp: %v", err)
		}
		checkSchema(t, ed)
		if t.Failed() {
			t.Logf("codexacp stderr:\n%s", stderr.String())
		}
	})
	return ed, ctx, cwd, home
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

// TestAuthAPIKeyAppServer: on the app-server backend, which reads no key
// from the environment, the API-key methods are offered; session/new needs
// sign-in until authenticate hands the key to codex (account/login/start),
// codex confirms it (account/read) and saves it as `codex login
// --with-api-key` does; the turn then reaches the model with the key.
func TestAuthAPIKeyAppServer(t *testing.T) {
	for _, v := range []struct{ method, env string }{
		{"openai-api-key", "OPENAI_API_KEY"},
		{"codex-api-key", "CODEX_API_KEY"},
	} {
		t.Run(v.method, func(t *testing.T) {
			mock := mockapi.New(t)
			const key = "sk-e2e-app-server-not-a-real-key"
			ed, ctx, cwd, home := authAgentOn(t, "app-server", mock, v.env+"="+key)
			init, err := ed.Initialize(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := authMethodIDs(init.AuthMethods); got != "chatgpt,openai-api-key,codex-api-key" {
				t.Errorf("authMethods = %s", got)
			}
			newSession := func() (acpsdk.NewSessionResponse, error) {
				return ed.Conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
			}
			_, err = newSession()
			var re *acpsdk.RequestError
			if !errors.As(err, &re) || re.Code != -32000 || !strings.Contains(re.Message, "choose that API-key method") {
				t.Fatalf("session/new before authenticate = %v, want auth_required", err)
			}
			if _, err := ed.Conn.Authenticate(ctx, acpsdk.AuthenticateRequest{MethodId: v.method}); err != nil {
				t.Fatalf("authenticate %s: %v", v.method, err)
			}
			status := exec.Command(codextest.Binary(t), "login", "status")
			status.Env = append(os.Environ(), "CODEX_HOME="+home)
			if out, err := status.CombinedOutput(); err != nil || !strings.Contains(string(out), "API key configured") {
				t.Errorf("codex login status after authenticate: %v\n%s", err, out)
			}
			sess, err := newSession()
			if err != nil {
				t.Fatalf("session/new after authenticate: %v", err)
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
				t.Errorf("Authorization = %q, want the key from %s", got, v.env)
			}
		})
	}
}

// TestAuthAPIKeyReplacesSavedKey: codex has an API key saved earlier that
// OpenAI now refuses (revoked, rotated): the turn answers auth_required,
// and choosing the API-key method then saves the key from the environment
// in its place (not "codex has a login of its own": that kept the old key,
// and every turn answered 401 again); the next turn uses the new key.
func TestAuthAPIKeyReplacesSavedKey(t *testing.T) {
	mock := mockapi.New(t)
	const oldKey, newKey = "sk-e2e-old-revoked-key-000000", "sk-e2e-new-key-111111111111"
	ed, ctx, cwd, home := authAgentAfter(t, "app-server", mock, func(env []string) {
		save := exec.Command(codextest.Binary(t), "login", "--with-api-key")
		save.Env, save.Stdin = env, strings.NewReader(oldKey+"\n")
		if out, err := save.CombinedOutput(); err != nil {
			t.Fatalf("codex login --with-api-key: %v\n%s", err, out)
		}
	}, "OPENAI_API_KEY="+newKey)
	if _, err := ed.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	sess, err := ed.Conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new with a saved key: %v", err)
	}
	prompt := func() (acpsdk.PromptResponse, error) {
		return ed.Conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sess.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hello")}})
	}
	for range 8 { // codex may retry
		mock.Enqueue(mockapi.HTTPError(401, "Incorrect API key provided: sk-e2e-*****0000."))
	}
	var re *acpsdk.RequestError
	if _, err := prompt(); !errors.As(err, &re) || re.Code != -32000 {
		t.Fatalf("prompt with the revoked key = %v, want auth_required (-32000)", err)
	}
	if _, err := ed.Conn.Authenticate(ctx, acpsdk.AuthenticateRequest{MethodId: "openai-api-key"}); err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	auth, err := os.ReadFile(filepath.Join(home, "auth.json"))
	if err != nil || !strings.Contains(string(auth), newKey) {
		t.Errorf("codex's auth.json after authenticate (%v) does not hold the new key", err)
	}
	n := len(mock.Requests())
	mock.Enqueue(mockapi.Reply(mockapi.Message("signed in again")))
	if resp, err := prompt(); err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt after authenticate = %+v, %v", resp, err)
	}
	reqs := mock.Requests()
	if len(reqs) <= n {
		t.Fatal("the model was not asked again")
	}
	if got := reqs[n].Header.Get("Authorization"); got != "Bearer "+newKey {
		t.Errorf("Authorization = %q, want the new key from OPENAI_API_KEY", got)
	}
}

// TestAuthKeyRefusedByOpenAI: a key codex took but OpenAI refuses (401 at
// the first model request, the only place it is checked) ends the turn
// with an error that says so, on both backends.
func TestAuthKeyRefusedByOpenAI(t *testing.T) {
	for _, backend := range []string{"exec", "app-server"} {
		t.Run(backend, func(t *testing.T) {
			mock := mockapi.New(t)
			ed, ctx, cwd, _ := authAgentOn(t, backend, mock, "OPENAI_API_KEY=sk-e2e-revoked-key-0000000000")
			if _, err := ed.Initialize(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := ed.Conn.Authenticate(ctx, acpsdk.AuthenticateRequest{MethodId: "openai-api-key"}); err != nil {
				t.Fatalf("authenticate: %v", err)
			}
			sess, err := ed.Conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
			if err != nil {
				t.Fatalf("session/new: %v", err)
			}
			const refused = "Incorrect API key provided: sk-e2e-*****0000."
			for range 8 { // codex may retry
				mock.Enqueue(mockapi.HTTPError(401, refused))
			}
			_, err = ed.Conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sess.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hello")}})
			var re *acpsdk.RequestError
			if !errors.As(err, &re) || re.Code != -32000 {
				t.Fatalf("prompt = %v, want auth_required (-32000)", err)
			}
			for _, w := range []string{"OpenAI refused", "401 Unauthorized", refused, "OPENAI_API_KEY"} {
				if !strings.Contains(re.Message, w) {
					t.Errorf("prompt error %q lacks %q", re.Message, w)
				}
			}
		})
	}
}
