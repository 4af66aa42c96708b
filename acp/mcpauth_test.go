package acp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// authBackend signs in and lists hooks as a test says, and records what
// the agent asked of it.
type authBackend struct {
	cmdBackend
	page    string // the sign-in page LoginMCPServer opens
	loginFn func(ctx context.Context) error
	servers []backend.MCPServerStatus
	hooks   []backend.Hook

	mu      sync.Mutex
	opened  []error  // what open answered
	trusted []string // key=hash of each TrustHook
}

func (b *authBackend) Capabilities() backend.Capabilities {
	return backend.ThreadCommands | backend.MCPLogin | backend.Hooks
}

func (b *authBackend) LoginMCPServer(ctx context.Context, _ backend.Turn, server string, open func(context.Context, string) error) error {
	err := open(ctx, b.page)
	b.mu.Lock()
	b.opened = append(b.opened, err)
	b.mu.Unlock()
	if err != nil {
		return err
	}
	if b.loginFn != nil {
		return b.loginFn(ctx)
	}
	return nil
}

func (b *authBackend) MCPServerStatus(context.Context, backend.Turn) ([]backend.MCPServerStatus, error) {
	return b.servers, nil
}

func (b *authBackend) Hooks(context.Context, backend.Turn) (backend.HookList, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return backend.HookList{Hooks: append([]backend.Hook(nil), b.hooks...)}, nil
}

func (b *authBackend) TrustHook(_ context.Context, _ backend.Turn, key, hash string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.trusted = append(b.trusted, key+"="+hash)
	for i := range b.hooks {
		if b.hooks[i].Key == key && b.hooks[i].Hash == hash {
			b.hooks[i].Trust = backend.HookTrusted
		}
	}
	return nil
}

const signInPage = "http://127.0.0.1:9/authorize?state=abc"

func TestMCPLoginCommand(t *testing.T) {
	t.Parallel()
	accept := func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
		return fakeeditor.Accept(nil), nil
	}
	decline := func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
		return fakeeditor.Decline(), nil
	}
	for _, tc := range []struct {
		name    string
		editor  fakeeditor.Options
		login   func(ctx context.Context) error
		prompt  string
		asked   int    // elicitation/create requests
		text    string // in the agent's text
		errCode int
	}{
		{name: "url elicitation", editor: fakeeditor.Options{Elicitation: accept, ElicitationURL: true}, asked: 1,
			prompt: "/mcp login vault", text: "Signed in to vault. Codex reloaded its MCP servers; vault has 1 tools (vault)."},
		{name: "declined", editor: fakeeditor.Options{Elicitation: decline, ElicitationURL: true}, asked: 1,
			prompt: "/mcp login vault", text: "Not signed in to vault: the sign-in page was declined. Nothing changed."},
		{name: "form-only editor gets a link", editor: fakeeditor.Options{Elicitation: accept},
			prompt: "/mcp login vault", text: "open this page in your browser:\n\n<" + signInPage + ">"},
		{name: "no elicitation gets a link", prompt: "/mcp login vault", text: "<" + signInPage + ">"},
		{name: "codex failed", prompt: "/mcp login vault", login: func(context.Context) error { return errors.New("codex could not sign in to vault: denied") },
			text: "⚠ Not signed in to vault: codex could not sign in to vault: denied."},
		{name: "no server", prompt: "/mcp login", errCode: -32602},
		{name: "two words", prompt: "/mcp login a b", errCode: -32602},
		{name: "other subcommand", prompt: "/mcp logout x", errCode: -32602},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be := &authBackend{page: signInPage, loginFn: tc.login,
				servers: []backend.MCPServerStatus{{Name: "vault", AuthStatus: "oAuth", Tools: []string{"vault"}}}}
			h := startAgent(t, be, tc.editor)
			sid := h.newSession(t, t.TempDir())
			resp, err := h.prompt(sid, tc.prompt)
			if tc.errCode != 0 {
				var rerr *acpsdk.RequestError
				if !errors.As(err, &rerr) || rerr.Code != tc.errCode {
					t.Fatalf("prompt = %v, want error %d", err, tc.errCode)
				}
				return
			}
			if err != nil || resp.StopReason != acpsdk.StopReasonEndTurn {
				t.Fatalf("prompt = %+v, %v", resp, err)
			}
			h.editor.Sync(h.ctx)
			if got := agentText(h.editor); !strings.Contains(got, tc.text) {
				t.Errorf("agent text = %q, want it to hold %q", got, tc.text)
			}
			var asked []acpsdk.UnstableCreateElicitationRequest
			for _, c := range h.editor.Calls() {
				if c.Method == "elicitation/create" {
					asked = append(asked, c.Params.(acpsdk.UnstableCreateElicitationRequest))
				}
			}
			if len(asked) != tc.asked {
				t.Fatalf("elicitation/create requests = %d, want %d", len(asked), tc.asked)
			}
			if tc.asked > 0 {
				u := asked[0].Url
				if u == nil || u.Url != signInPage ||
					!strings.Contains(u.Message, "vault") || !strings.HasPrefix(string(u.ElicitationId), "mcp-login-vault-") {
					t.Errorf("elicitation = %+v", asked[0])
				}
			}
		})
	}
}

// A session/cancel while the sign-in is awaited stops the wait: the prompt
// answers cancelled.
func TestMCPLoginCancelled(t *testing.T) {
	t.Parallel()
	waiting := make(chan struct{})
	be := &authBackend{page: signInPage, loginFn: func(ctx context.Context) error {
		close(waiting)
		<-ctx.Done()
		return ctx.Err()
	}}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	done := h.promptInBackground(sid, "/mcp login vault")
	<-waiting
	if err := h.editor.Conn.Cancel(h.ctx, acpsdk.CancelNotification{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.resp.StopReason != acpsdk.StopReasonCancelled {
		t.Errorf("prompt = %+v, %v; want cancelled", r.resp, r.err)
	}
}

// /mcp marks a server that needs a sign-in and names the command.
func TestMCPListSignIn(t *testing.T) {
	t.Parallel()
	be := &authBackend{servers: []backend.MCPServerStatus{
		{Name: "vault", RuntimeStatus: "", AuthStatus: "notLoggedIn", ToolsError: "MCP startup failed: Auth required"},
		{Name: "docs", AuthStatus: "oAuth", Tools: []string{"search"}}}}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	if _, err := h.prompt(sid, "/mcp"); err != nil {
		t.Fatal(err)
	}
	h.editor.Sync(h.ctx)
	got := agentText(h.editor)
	for _, want := range []string{"- vault: unknown, auth notLoggedIn, 0 tools; needs you to sign in: /mcp login vault\n",
		"- docs: unknown, auth oAuth, 1 tools (search)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("/mcp = %q, want it to hold %q", got, want)
		}
	}
	if strings.Contains(got, "Auth required") {
		t.Errorf("/mcp shows codex's handshake error instead of the sign-in: %q", got)
	}
}

// Without the backend's sign-in, /mcp login says so.
func TestMCPLoginUnsupported(t *testing.T) {
	t.Parallel()
	be := &cmdBackend{feats: backend.ThreadCommands}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	_, err := h.prompt(sid, "/mcp login vault")
	var rerr *acpsdk.RequestError
	if !errors.As(err, &rerr) || !strings.Contains(err.Error(), "not available") {
		t.Errorf("prompt = %v, want not available", err)
	}
}
