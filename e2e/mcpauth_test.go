package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/e2e/oauthmcp"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// TestMCPServerSignIn: a remote MCP server in codex's config that needs
// OAuth (e2e/oauthmcp: a streamable-HTTP server answering 401 until it
// sees a token of its authorization server's) is shown as needing a
// sign-in by /mcp and in the first turn; /mcp login puts the sign-in page
// to the editor as a URL elicitation, which the test answers as a browser
// would (it accepts, then follows the page's redirects to codex's loopback
// callback); codex reports the login completed, codexacp has codex reload
// its servers, and the server's tool then works in the same session. The
// token never reaches codexacp's log or its --record transcript, nor does
// the page. docs/errors.md, "MCP servers that need a sign-in".
func TestMCPServerSignIn(t *testing.T) {
	fake, err := oauthmcp.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	transcript := filepath.Join(t.TempDir(), "session.ndjson")

	var mu sync.Mutex
	var pages []string
	visited := make(chan error, 1)
	browser := &http.Client{Timeout: 30 * time.Second}
	e := start(t, setup{backend: "app-server", fs: true, elicitationURL: true,
		elicitation: func(_ context.Context, req acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
			if req.Url == nil {
				return fakeeditor.Decline(), nil
			}
			mu.Lock()
			pages = append(pages, req.Url.Url)
			mu.Unlock()
			go func() { // the user's browser, once the editor said yes
				resp, err := browser.Get(req.Url.Url)
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = &os.PathError{Op: "GET", Path: "callback", Err: os.ErrInvalid}
					}
				}
				visited <- err
			}()
			return fakeeditor.Accept(nil), nil
		},
		args: []string{"--record", transcript,
			"-c", `mcp_servers.vault.url="` + fake.URL() + `"`,
			"-c", `mcp_oauth_credentials_store="file"`}})

	// Before: /mcp names the command; a turn warns.
	e.mustPrompt("/mcp")
	if got := agentText(e); !strings.Contains(got, "vault: ") || !strings.Contains(got, "needs you to sign in: /mcp login vault") {
		t.Fatalf("/mcp before the sign-in:\n%s", got)
	}
	n := len(e.editor.Updates())
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("hello")))
	e.mustPrompt("say hello")
	if got := agentTextSince(e, n); !strings.Contains(got, "⚠ MCP server vault needs you to sign in before codex can use its tools: run /mcp login vault") {
		t.Errorf("the turn does not say that vault needs a sign-in:\n%s", got)
	}

	n = len(e.editor.Updates())
	if r := e.mustPrompt("/mcp login vault"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("/mcp login: stopReason %q", r.StopReason)
	}
	select {
	case err := <-visited:
		if err != nil {
			t.Fatalf("the browser's visit: %v", err)
		}
	default:
		t.Fatal("the sign-in page never reached the editor")
	}
	got := agentTextSince(e, n)
	if !strings.Contains(got, "Signed in to vault. Codex reloaded its MCP servers; vault has 1 tools (vault).") {
		t.Fatalf("/mcp login vault said:\n%s", got)
	}
	c := fake.Counts()
	if c.Registrations != 1 || c.Authorizations != 1 || c.Tokens != 1 || c.Authorized == 0 {
		t.Errorf("the fake saw %+v, want one registration, authorization and token, and an authorized request", c)
	}
	mu.Lock()
	page := pages[0]
	mu.Unlock()
	if !strings.HasPrefix(page, strings.TrimSuffix(fake.URL(), "/mcp")+"/authorize?") || !strings.Contains(page, "code_challenge_method=S256") {
		t.Errorf("sign-in page %q", page)
	}

	// After: the tool works in the same session.
	e.mock.Enqueue(
		mockapi.Reply(mockapi.NamespacedCall("call_v", "mcp__vault", "vault", `{}`)),
		mockapi.Reply(mockapi.Message("done")),
	)
	e.mustPrompt("open the vault")
	if out := toolOutput(t, e, "call_v"); !strings.Contains(out, oauthmcp.VaultAnswer) {
		t.Errorf("the vault tool answered %s", out)
	}
	n = len(e.editor.Updates())
	e.mustPrompt("/mcp")
	if got := agentTextSince(e, n); strings.Contains(got, "needs you to sign in") || !strings.Contains(got, "auth oAuth, 1 tools (vault)") {
		t.Errorf("/mcp after the sign-in:\n%s", got)
	}

	e.stop()
	data, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	secret := map[string]string{"the sign-in page": page}
	for i, tok := range fake.Tokens() {
		secret["access token "+string(rune('1'+i))] = tok
	}
	if len(fake.Tokens()) == 0 {
		t.Fatal("no token was issued")
	}
	for what, s := range secret {
		esc, _ := json.Marshal(s)
		for where, text := range map[string]string{"the transcript": string(data), "the log": e.stderr.String()} {
			if strings.Contains(text, s) || strings.Contains(text, strings.Trim(string(esc), `"`)) {
				t.Errorf("%s holds %s", where, what)
			}
		}
	}
}
