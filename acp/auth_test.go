package acp

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/internal/acpschema"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// fakeLogin stands in for `codex login status` / `codex logout`.
type fakeLogin struct {
	mu     sync.Mutex
	status error       // what LoginStatus answers
	login  codex.Login // the kind of login when status is nil ("": ChatGPT)
	checks int
}

func (f *fakeLogin) LoginStatus(context.Context) (codex.Login, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks++
	if f.status != nil {
		return codex.LoginNone, f.status
	}
	return cmp.Or(f.login, codex.LoginChatGPT), nil
}

func (f *fakeLogin) set(err error) {
	f.mu.Lock()
	f.status = err
	f.mu.Unlock()
}

func (f *fakeLogin) Logout(context.Context) error {
	f.set(codex.ErrNotLoggedIn)
	return nil
}

func (f *fakeLogin) auth(env map[string]string) Auth {
	return Auth{
		LoginStatus: f.LoginStatus, Logout: f.Logout, EnvKeys: true,
		Getenv:       func(k string) string { return env[k] },
		LoginCommand: []string{"/usr/bin/codexacp", "--codex-path", "/x/codex", "login"},
	}
}

var errNotLoggedInFake = fmt.Errorf("%w (Not logged in)", codex.ErrNotLoggedIn)

func wantAuthRequired(t *testing.T, err error, wantText ...string) {
	t.Helper()
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || re.Code != -32000 {
		t.Fatalf("got %v, want auth_required (-32000)", err)
	}
	for _, w := range wantText {
		if !strings.Contains(re.Message, w) {
			t.Errorf("auth_required message %q lacks %q", re.Message, w)
		}
	}
}

func TestNewSessionAuth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		status  error
		env     map[string]string
		custom  string
		envKeys bool
		want    bool // session/new succeeds
	}{
		{"OPENAI_API_KEY set", errNotLoggedInFake, map[string]string{"OPENAI_API_KEY": "sk-x"}, "", true, true},
		{"CODEX_API_KEY set", errNotLoggedInFake, map[string]string{"CODEX_API_KEY": "sk-x"}, "", true, true},
		{"codex logged in", nil, nil, "", true, true},
		{"custom provider", errNotLoggedInFake, nil, "mock", true, true},
		{"login status unknown", errors.New("codex crashed"), nil, "", true, true},
		{"nothing", errNotLoggedInFake, nil, "", true, false},
		{"empty key", errNotLoggedInFake, map[string]string{"OPENAI_API_KEY": ""}, "", true, false},
		{"key but backend ignores env keys", errNotLoggedInFake, map[string]string{"OPENAI_API_KEY": "sk-x"}, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			login := &fakeLogin{status: tc.status}
			auth := login.auth(tc.env)
			auth.CustomProvider, auth.EnvKeys = tc.custom, tc.envKeys
			h := startAgentWith(t, Options{Backend: &fakeBackend{}, Auth: auth}, fakeeditor.Options{})
			if _, err := h.editor.Initialize(h.ctx); err != nil {
				t.Fatal(err)
			}
			_, err := h.editor.Conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
			if tc.want {
				if err != nil {
					t.Fatalf("session/new: %v", err)
				}
				return
			}
			want := []string{"Authentication required", "codex login"}
			if tc.envKeys {
				want = append(want, "OPENAI_API_KEY", "agent_servers")
			} else {
				want = append(want, "codex login --with-api-key")
			}
			wantAuthRequired(t, err, want...)
			checkSchema(t, h.editor.Raw())
		})
	}
}

// TestLoginStatusCachedAndRechecked: session/new asks codex once; a
// successful authenticate replaces the cached answer.
func TestLoginStatusCachedAndRechecked(t *testing.T) {
	t.Parallel()
	login := &fakeLogin{status: errNotLoggedInFake}
	auth := login.auth(nil)
	h := startAgentWith(t, Options{Backend: &fakeBackend{}, Auth: auth}, fakeeditor.Options{})
	if _, err := h.editor.Initialize(h.ctx); err != nil {
		t.Fatal(err)
	}
	newSession := func() error {
		_, err := h.editor.Conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
		return err
	}
	for range 2 {
		wantAuthRequired(t, newSession())
	}
	// "Not logged in" is not cached: each session/new looks again.
	if login.checks != 2 {
		t.Errorf("codex login status ran %d times for two session/new when not logged in, want 2", login.checks)
	}
	// The user signs in in a terminal: the next session/new sees it, with
	// no authenticate; a login is cached.
	login.set(nil)
	for range 2 {
		if err := newSession(); err != nil {
			t.Fatalf("session/new after codex login in a terminal: %v", err)
		}
	}
	if login.checks != 3 {
		t.Errorf("codex login status ran %d times, want 3 (a login is cached)", login.checks)
	}
	if _, err := h.editor.Conn.Authenticate(h.ctx, acpsdk.AuthenticateRequest{MethodId: AuthChatGPT}); err != nil {
		t.Fatalf("authenticate chatgpt after login: %v", err)
	}
	// Logout (unstable) removes the login: sessions need sign-in again.
	if _, err := h.editor.Conn.UnstableLogout(h.ctx, acpsdk.UnstableLogoutRequest{}); err != nil {
		t.Fatalf("logout: %v", err)
	}
	wantAuthRequired(t, newSession())
	// A status codex could not tell is cached (sessions go on).
	login.set(errors.New("codex crashed"))
	checks := login.checks
	for range 2 {
		if err := newSession(); err != nil {
			t.Fatalf("session/new with an unknown login status: %v", err)
		}
	}
	if login.checks != checks+1 {
		t.Errorf("an unknown login status was checked %d times for two session/new, want once", login.checks-checks)
	}
	checkSchema(t, h.editor.Raw())
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, method string
		status       error
		env          map[string]string
		wantCode     int // 0: success
		wantText     string
	}{
		{"chatgpt logged in", AuthChatGPT, nil, nil, 0, ""},
		{"chatgpt not logged in", AuthChatGPT, errNotLoggedInFake, nil, -32000, "Run `codex login` in a terminal"},
		{"chatgpt check fails", AuthChatGPT, errors.New("codex crashed"), nil, -32000, "codex crashed"},
		{"openai key set", AuthOpenAIAPIKey, errNotLoggedInFake, map[string]string{"OPENAI_API_KEY": "sk-x"}, 0, ""},
		{"openai key missing", AuthOpenAIAPIKey, nil, map[string]string{"CODEX_API_KEY": "sk-x"}, -32000, "OPENAI_API_KEY is not set"},
		{"codex key set", AuthCodexAPIKey, errNotLoggedInFake, map[string]string{"CODEX_API_KEY": "sk-x"}, 0, ""},
		{"codex key missing", AuthCodexAPIKey, nil, nil, -32000, "CODEX_API_KEY is not set"},
		{"unknown method", "gateway", nil, nil, -32602, "chatgpt, openai-api-key, codex-api-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			login := &fakeLogin{status: tc.status}
			h := startAgentWith(t, Options{Backend: &fakeBackend{}, Auth: login.auth(tc.env)}, fakeeditor.Options{})
			if _, err := h.editor.Initialize(h.ctx); err != nil {
				t.Fatal(err)
			}
			_, err := h.editor.Conn.Authenticate(h.ctx, acpsdk.AuthenticateRequest{MethodId: tc.method})
			if tc.wantCode == 0 {
				if err != nil {
					t.Fatalf("authenticate %s: %v", tc.method, err)
				}
				return
			}
			var re *acpsdk.RequestError
			if !errors.As(err, &re) || re.Code != tc.wantCode || !strings.Contains(re.Message, tc.wantText) {
				t.Fatalf("authenticate %s = %v, want code %d with %q", tc.method, err, tc.wantCode, tc.wantText)
			}
		})
	}
}

// TestAuthenticateSavesKey: where codex is given the key (the app-server
// backend), authenticate hands it over, trimmed, and answers with codex's
// verdict (the key left out of it); afterwards session/new needs nothing.
func TestAuthenticateSavesKey(t *testing.T) {
	t.Parallel()
	const key = "sk-unit-secret-0123456789"
	for _, tc := range []struct {
		name, method string
		env          map[string]string
		saveErr      error
		wantSaved    string
		wantText     string // "" : success
	}{
		{"openai key", AuthOpenAIAPIKey, map[string]string{"OPENAI_API_KEY": " " + key + "\n"}, nil, key, ""},
		{"codex key", AuthCodexAPIKey, map[string]string{"CODEX_API_KEY": key}, nil, key, ""},
		{"blank key not sent", AuthOpenAIAPIKey, map[string]string{"OPENAI_API_KEY": "  "}, nil, "", "OPENAI_API_KEY is not set"},
		{"codex refuses", AuthCodexAPIKey, map[string]string{"CODEX_API_KEY": key}, errors.New("bad params: " + key), key,
			"codex did not take the API key from CODEX_API_KEY: bad params: [REDACTED]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			login := &fakeLogin{status: errNotLoggedInFake}
			auth := login.auth(tc.env)
			auth.EnvKeys = false
			var saved string
			auth.SaveAPIKey = func(_ context.Context, k string) error {
				saved = k
				return tc.saveErr
			}
			h := startAgentWith(t, Options{Backend: &fakeBackend{}, Auth: auth}, fakeeditor.Options{})
			init, err := h.editor.Initialize(h.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(init.AuthMethods); n != 3 {
				t.Errorf("%d auth methods, want chatgpt and the two API-key ones", n)
			}
			_, err = h.editor.Conn.Authenticate(h.ctx, acpsdk.AuthenticateRequest{MethodId: tc.method})
			if saved != tc.wantSaved {
				t.Errorf("key handed to codex %q, want %q", saved, tc.wantSaved)
			}
			_, newErr := h.editor.Conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acpsdk.McpServer{}})
			if tc.wantText == "" {
				if err != nil || newErr != nil {
					t.Fatalf("authenticate: %v; session/new: %v", err, newErr)
				}
				return
			}
			wantAuthRequired(t, err, tc.wantText)
			wantAuthRequired(t, newErr, "choose that API-key method")
			for _, raw := range h.editor.Raw() {
				if bytes.Contains(raw, []byte(key)) {
					t.Errorf("the key reached the client: %s", raw)
				}
			}
		})
	}
}

func TestAuthenticateCustomProvider(t *testing.T) {
	t.Parallel()
	login := &fakeLogin{status: errNotLoggedInFake}
	auth := login.auth(nil)
	auth.CustomProvider = "mock"
	h := startAgentWith(t, Options{Backend: &fakeBackend{}, Auth: auth}, fakeeditor.Options{})
	resp, err := h.editor.Initialize(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.AuthMethods) != 0 || resp.AgentCapabilities.Auth.Logout != nil {
		t.Errorf("custom provider: authMethods %+v, auth capabilities %+v; want none", resp.AuthMethods, resp.AgentCapabilities.Auth)
	}
	_, err = h.editor.Conn.Authenticate(h.ctx, acpsdk.AuthenticateRequest{MethodId: AuthChatGPT})
	var re *acpsdk.RequestError
	if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, `"mock"`) {
		t.Errorf("authenticate with a custom provider = %v, want -32602 naming it", err)
	}
	if login.checks != 0 {
		t.Errorf("codex login status ran %d times with a custom provider", login.checks)
	}
}

func TestInitializeAuthMethods(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		caps    acpsdk.ClientCapabilities
		envKeys bool
		want    string // the chatgpt method's JSON must contain this
		ids     []string
	}{
		{"plain client", acpsdk.ClientCapabilities{}, true, `"id":"chatgpt"`, []string{"chatgpt", "openai-api-key", "codex-api-key"}},
		{"terminal auth", acpsdk.ClientCapabilities{Auth: acpsdk.AuthCapabilities{Terminal: true}}, true,
			`"args":["login"]`, []string{"chatgpt", "openai-api-key", "codex-api-key"}},
		{"zed terminal-auth meta", acpsdk.ClientCapabilities{Meta: map[string]any{"terminal-auth": true}}, true,
			`"_meta":{"terminal-auth":{"args":["--codex-path","/x/codex","login"],"command":"/usr/bin/codexacp","label":"codex login"}}`,
			[]string{"chatgpt", "openai-api-key", "codex-api-key"}},
		{"no way to pass a key: no key methods", acpsdk.ClientCapabilities{}, false, `"id":"chatgpt"`, []string{"chatgpt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			login := &fakeLogin{}
			auth := login.auth(nil)
			auth.EnvKeys = tc.envKeys
			h := startAgentWith(t, Options{Backend: &fakeBackend{}, Auth: auth}, fakeeditor.Options{})
			resp, err := h.editor.Conn.Initialize(h.ctx, acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber, ClientCapabilities: tc.caps})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, m := range resp.AuthMethods {
				switch {
				case m.Agent != nil:
					ids = append(ids, m.Agent.Id)
				case m.Terminal != nil:
					ids = append(ids, m.Terminal.Id)
				case m.EnvVar != nil:
					ids = append(ids, m.EnvVar.Id)
					if len(m.EnvVar.Vars) != 1 || !m.EnvVar.Vars[0].Secret {
						t.Errorf("env var method %s: vars %+v", m.EnvVar.Id, m.EnvVar.Vars)
					}
				}
			}
			if fmt.Sprint(ids) != fmt.Sprint(tc.ids) {
				t.Errorf("auth method ids = %v, want %v", ids, tc.ids)
			}
			if resp.AgentCapabilities.Auth.Logout == nil {
				t.Error("logout not advertised")
			}
			if (resp.AuthMethods[0].Terminal != nil) != tc.caps.Auth.Terminal {
				t.Errorf("chatgpt method is terminal: %v, client runs terminal methods: %v", resp.AuthMethods[0].Terminal != nil, tc.caps.Auth.Terminal)
			}
			found := false
			for _, raw := range h.editor.Raw() {
				if !bytes.Contains(raw, []byte(`"authMethods"`)) {
					continue
				}
				found = true
				if err := acpschema.ValidateResponse("initialize", raw); err != nil {
					t.Errorf("initialize response violates the schema: %v\n%s", err, raw)
				}
				if !bytes.Contains(raw, []byte(tc.want)) {
					t.Errorf("initialize response lacks %s:\n%s", tc.want, raw)
				}
			}
			if !found {
				t.Error("initialize response not seen")
			}
		})
	}
}

// TestResumeNeedsAuth: session/resume (and load, the same path) answers
// auth_required as session/new does.
func TestResumeNeedsAuth(t *testing.T) {
	t.Parallel()
	login := &fakeLogin{}
	h := startAgentWith(t, Options{Backend: &fakeBackend{}, StateDir: t.TempDir(), Auth: login.auth(nil)}, fakeeditor.Options{})
	cwd := t.TempDir()
	sid := h.newSession(t, cwd)
	if _, err := h.editor.Conn.UnstableLogout(h.ctx, acpsdk.UnstableLogoutRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err := h.editor.Conn.ResumeSession(h.ctx, acpsdk.ResumeSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	wantAuthRequired(t, err, "codex login")
	_, err = h.editor.Conn.LoadSession(h.ctx, acpsdk.LoadSessionRequest{SessionId: sid, Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	wantAuthRequired(t, err, "codex login")
}

// checkSchema validates every message the agent sent.
func checkSchema(t *testing.T, raw [][]byte) {
	t.Helper()
	for _, m := range raw {
		if err := acpschema.ValidateMessage(m); err != nil {
			t.Errorf("agent message violates the ACP schema: %v\n%s", err, m)
		}
	}
}

// TestAuthenticateKeyKeepsLogin: an API-key method on the app-server
// backend saves the key as codex's login when codex has none, or only an
// API key saved earlier (perhaps revoked since: keeping it would answer
// every turn 401 again). codex's account/login/start with an API key
// replaces what auth.json holds (measured: a ChatGPT login's tokens are
// gone), so any other login codex already has is kept — acpx, for one,
// authenticates with openai-api-key whenever OPENAI_API_KEY is set — and a
// status that cannot be read saves nothing.
func TestAuthenticateKeyKeepsLogin(t *testing.T) {
	t.Parallel()
	const key = "sk-unit-secret-0123456789"
	for _, tc := range []struct {
		name      string
		status    error
		login     codex.Login
		wantSaved bool
		wantText  string // "": success
	}{
		{"chatgpt login kept", nil, codex.LoginChatGPT, false, ""},
		{"other login kept", nil, codex.LoginOther, false, ""},
		{"saved api key replaced", nil, codex.LoginAPIKey, true, ""},
		{"no login: key saved", errNotLoggedInFake, codex.LoginNone, true, ""},
		{"status unknown: nothing saved", errors.New("codex login status: exit status 2"), codex.LoginNone, false, "cannot check codex's login"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			login := &fakeLogin{status: tc.status, login: tc.login}
			auth := login.auth(map[string]string{"OPENAI_API_KEY": key})
			auth.EnvKeys = false
			saved := false
			auth.SaveAPIKey = func(context.Context, string) error { saved = true; return nil }
			h := startAgentWith(t, Options{Backend: &fakeBackend{}, Auth: auth}, fakeeditor.Options{})
			init, err := h.editor.Initialize(h.ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range init.AuthMethods {
				if m.EnvVar == nil {
					continue
				}
				for _, want := range []string{"replacing an API key saved earlier", "a ChatGPT login codex has is kept"} {
					if !strings.Contains(*m.EnvVar.Description, want) {
						t.Errorf("method %s's description lacks %q: %q", m.EnvVar.Id, want, *m.EnvVar.Description)
					}
				}
			}
			_, err = h.editor.Conn.Authenticate(h.ctx, acpsdk.AuthenticateRequest{MethodId: AuthOpenAIAPIKey})
			if saved != tc.wantSaved {
				t.Errorf("key saved: %v, want %v", saved, tc.wantSaved)
			}
			if tc.wantText == "" {
				if err != nil {
					t.Fatalf("authenticate: %v", err)
				}
				return
			}
			wantAuthRequired(t, err, tc.wantText)
		})
	}
}
