//go:build unix

package appserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/backendtest"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/testkit"
)

// shAuthAppServer is a stand-in `codex app-server` for sign-ins and hooks.
// mcpServer/oauth/login answers a page and login L1; once the file
// "visited" exists in $FAKE_DIR (the test's "browser" opened the page), a
// background job sends the completion ($FAKE_RESULT: its success and error
// fields; the end of stdin ends a job still waiting, as a page never
// visited does after 30 s, so that no test leaves it behind or waits on its
// hold of stdout). Every request line is appended to $FAKE_DIR/requests.
// hooks/list answers one untrusted command hook.
const shAuthAppServer = `#!/bin/sh
while IFS= read -r line; do
  printf '%s\n' "$line" >> "$FAKE_DIR/requests"
  id=$(printf '%s' "$line" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
  [ -n "$id" ] || continue
  case "$line" in
  *'"method":"initialize"'*) echo "{\"id\":$id,\"result\":{\"userAgent\":\"sh\"}}" ;;
  *'"method":"mcpServer/oauth/login"'*)
    echo "{\"id\":$id,\"result\":{\"authorizationUrl\":\"http://127.0.0.1:9/authorize?state=st\",\"loginId\":\"L1\"}}"
    ( n=0; while [ ! -f "$FAKE_DIR/visited" ]; do sleep 0.02; n=$((n+1)); [ $n -lt 1500 ] || exit 0; done
      echo "{\"method\":\"mcpServer/oauthLogin/completed\",\"params\":{\"name\":\"other\",\"success\":true,\"loginId\":\"L0\"}}"
      echo "{\"method\":\"mcpServer/oauthLogin/completed\",\"params\":{\"name\":\"vault\",\"loginId\":\"L1\",$FAKE_RESULT}}" ) &
    job=$! ;;
  *'"method":"hooks/list"'*)
    echo "{\"id\":$id,\"result\":{\"data\":[{\"cwd\":\"/p\",\"hooks\":[{\"key\":\"/p/.codex/hooks.json:pre_tool_use:0:0\",\"eventName\":\"preToolUse\",\"handlerType\":\"command\",\"command\":\"echo checked\",\"async\":false,\"matcher\":\"shell\",\"timeoutSec\":600,\"statusMessage\":null,\"sourcePath\":\"/p/.codex/hooks.json\",\"source\":\"project\",\"pluginId\":null,\"displayOrder\":0,\"enabled\":true,\"isManaged\":false,\"currentHash\":\"sha256:86e4\",\"trustStatus\":\"untrusted\"}],\"warnings\":[\"w1\"],\"errors\":[{\"path\":\"/p/x.json\",\"message\":\"bad\"}]}]}}" ;;
  *'"method":"config/batchWrite"'*) echo "{\"id\":$id,\"result\":{\"status\":\"ok\",\"version\":\"v2\",\"filePath\":\"/h/config.toml\"}}" ;;
  *) echo "{\"id\":$id,\"result\":{}}" ;;
  esac
done
[ -z "$job" ] || kill "$job" 2>/dev/null
`

// authBackend is a backend on shAuthAppServer; result is the completion's
// fields.
func authBackend(t *testing.T, result string) (*Backend, string) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "codex")
	if err := os.WriteFile(script, []byte(shAuthAppServer), 0o755); err != nil {
		t.Fatal(err)
	}
	b := New(codexapp.Options{Path: script, Logger: testkit.DiscardLogger(),
		Env: append(os.Environ(), "FAKE_DIR="+dir, "FAKE_RESULT="+result)})
	t.Cleanup(func() { b.Close() })
	return b, dir
}

// requests are the methods the fake was sent, in order.
func requests(t *testing.T, dir string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "requests"))
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for line := range strings.Lines(string(raw)) {
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method != "initialize" && m.Method != "initialized" {
			methods = append(methods, m.Method)
		}
	}
	return methods
}

func TestLoginMCPServer(t *testing.T) {
	errNo := errors.New("declined in the test")
	for _, tc := range []struct {
		name    string
		result  string // the completion's fields
		visit   bool   // the user opens the page
		openErr error
		cancel  bool // the prompt is cancelled while waiting
		err     string
		methods []string
	}{
		{name: "signed in", result: `"success":true`, visit: true,
			methods: []string{"mcpServer/oauth/login", "config/mcpServer/reload"}},
		{name: "codex failed", result: `"success":false,"error":"token exchange failed"`, visit: true,
			err: "token exchange failed", methods: []string{"mcpServer/oauth/login"}},
		{name: "declined", result: `"success":true`, openErr: errNo,
			err: errNo.Error(), methods: []string{"mcpServer/oauth/login"}},
		{name: "cancelled", result: `"success":true`, cancel: true,
			err: context.Canceled.Error(), methods: []string{"mcpServer/oauth/login"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, dir := authBackend(t, tc.result)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var pages []string
			err := b.LoginMCPServer(ctx, backend.Turn{SessionID: "s", Cwd: dir}, "vault", func(_ context.Context, page string) error {
				pages = append(pages, page)
				if tc.visit {
					os.WriteFile(filepath.Join(dir, "visited"), nil, 0o644)
				}
				if tc.cancel {
					cancel()
				}
				return tc.openErr
			})
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("LoginMCPServer = %v, want %q", err, tc.err)
			}
			if !slices.Equal(pages, []string{"http://127.0.0.1:9/authorize?state=st"}) {
				t.Errorf("pages opened = %q", pages)
			}
			if got := requests(t, dir); !slices.Equal(got, tc.methods) {
				t.Errorf("requests = %q, want %q", got, tc.methods)
			}
			b.mcpAuth.mu.Lock()
			waiting := len(b.mcpAuth.waiting)
			b.mcpAuth.mu.Unlock()
			if waiting != 0 {
				t.Errorf("%d logins still awaited", waiting)
			}
		})
	}
}

// The login asks codex for a timeout within its own bound, and for the
// session's thread only when codex has it loaded.
func TestLoginMCPServerParams(t *testing.T) {
	b, dir := authBackend(t, `"success":true`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b.LoginMCPServer(ctx, backend.Turn{SessionID: "s", ThreadID: "not-loaded"}, "vault", func(context.Context, string) error {
		return errors.New("stop")
	})
	raw, _ := os.ReadFile(filepath.Join(dir, "requests"))
	if !strings.Contains(string(raw), `"params":{"name":"vault","timeoutSecs":300}`) {
		t.Errorf("login request: %s", raw)
	}
}

// A failed start for want of a sign-in, reported while no turn of the
// thread runs, is shown by the thread's next turn, once; a sign-in to the
// server drops it.
func TestMCPAuthSignInNeeded(t *testing.T) {
	var m mcpAuth
	failed := func(thread, server string) json.RawMessage {
		return json.RawMessage(`{"threadId":"` + thread + `","name":"` + server + `","status":"failed","error":"The ` + server + ` MCP server is not logged in. Run ` + "`codex mcp login " + server + "`" + `.","failureReason":null}`)
	}
	for _, p := range []json.RawMessage{failed("t1", "vault"), failed("t1", "vault"), failed("t1", "docs"), failed("t2", "vault")} {
		if !m.notify("mcpServer/startupStatus/updated", p) {
			t.Fatal("startup status not taken")
		}
	}
	m.notify("mcpServer/startupStatus/updated", json.RawMessage(`{"threadId":"t3","name":"x","status":"failed","error":"connection refused"}`))
	if m.notify("skills/changed", nil) {
		t.Error("another method was taken")
	}
	m.signedIn("docs")
	if got := m.take("t1"); !slices.Equal(got, []string{"vault"}) {
		t.Errorf("t1 needs %q, want [vault]", got)
	}
	if got := m.take("t1"); len(got) != 0 {
		t.Errorf("t1 shown twice: %q", got)
	}
	if got := m.take("t3"); len(got) != 0 {
		t.Errorf("t3 (another failure) needs %q", got)
	}
	m.signedIn("vault")
	if got := m.take("t2"); len(got) != 0 {
		t.Errorf("t2 needs %q after the sign-in", got)
	}

	b := New(codexapp.Options{Logger: testkit.DiscardLogger()})
	defer b.Close()
	b.mcpAuth.notify("mcpServer/startupStatus/updated", failed("t9", "vault"))
	out := &recordingOutput{}
	b.warnSignIns("t9", out)
	if len(out.events) != 1 || out.events[0].Type != events.TypeError || out.events[0].Message != events.MCPSignInMessage("vault") {
		t.Errorf("events = %+v", out.events)
	}
}

func TestHooks(t *testing.T) {
	b, dir := authBackend(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := b.Hooks(ctx, backend.Turn{Cwd: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	want := backend.Hook{Key: "/p/.codex/hooks.json:pre_tool_use:0:0", Event: "preToolUse", Matcher: "shell",
		Handler: "command", Command: "echo checked", Source: "project", SourcePath: "/p/.codex/hooks.json",
		Enabled: true, Timeout: 600, Hash: "sha256:86e4", Trust: "untrusted"}
	if len(list.Hooks) != 1 || list.Hooks[0] != want || !list.Hooks[0].NeedsTrust() {
		t.Errorf("hooks = %+v", list.Hooks)
	}
	if !slices.Equal(list.Warnings, []string{"w1"}) || len(list.Errors) != 1 || list.Errors[0].Message != "bad" {
		t.Errorf("warnings %q, errors %+v", list.Warnings, list.Errors)
	}
	if err := b.TrustHook(ctx, backend.Turn{}, want.Key, want.Hash); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "requests"))
	for _, s := range []string{`"method":"hooks/list","params":{"cwds":["/p"]}`,
		`"method":"config/batchWrite","params":{"edits":[{"keyPath":"hooks.state","mergeStrategy":"upsert","value":{"/p/.codex/hooks.json:pre_tool_use:0:0":{"trusted_hash":"sha256:86e4"}}}],"reloadUserConfig":true}`} {
		if !strings.Contains(string(raw), s) {
			t.Errorf("no %s in the requests:\n%s", s, raw)
		}
	}
	if err := b.TrustHook(ctx, backend.Turn{}, "", ""); err == nil {
		t.Error("trusting no hook did not fail")
	}
}

// recordingOutput keeps the events it is given.
type recordingOutput struct {
	backendtest.NopOutput
	events []events.Event
}

func (o *recordingOutput) Event(ev events.Event) { o.events = append(o.events, ev) }
