package appserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/backendtest"
	"github.com/codexacp/codexacp/codex"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/appserver/protocol"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/testkit"
)

func TestThreadParams(t *testing.T) {
	turn := backend.Turn{SessionID: "sess_1", Cwd: "/ws", Mode: backend.ModeAsk, Tools: &backend.TurnTools{URL: "http://127.0.0.1:1/mcp", Token: "tok"},
		Catalog: "/cache/catalog.json"}
	start := threadParams(turn)
	config := start.Config
	acp := config["mcp_servers.acp"].(protocol.MCPServerConfig)
	if acp.HTTPHeaders["Authorization"] != "Bearer tok" || !acp.Required || acp.DefaultToolsApprovalMode != "approve" {
		t.Errorf("our tool server = %+v", acp)
	}
	if config["shell_environment_policy.set."+sessionTagEnv] != "sess_1" || config["model_catalog_json"] != "/cache/catalog.json" {
		t.Errorf("config = %v", config)
	}
	if !strings.Contains(start.DeveloperInstructions, "mcp__acp") || start.Sandbox != "read-only" || start.ApprovalPolicy.Policy != "on-request" {
		t.Errorf("params = %+v", start)
	}
	// The token appears once, in the header: nowhere else in the params.
	b, _ := json.Marshal(start)
	if strings.Count(string(b), "tok") != 1 {
		t.Errorf("token in the params %d times: %s", strings.Count(string(b), "tok"), b)
	}
}

// TestThreadParamsRelay: with a relay the thread's config names a stdio
// server whose environment carries the token (sent over the app-server's
// stdin), and no URL.
func TestThreadParamsRelay(t *testing.T) {
	relay := &backend.ToolsRelay{Command: "/bin/codexacp", Args: []string{"mcp-relay"}, Env: map[string]string{"SOCK": "/tmp/d/s"}, TokenEnv: "TOKVAR"}
	turn := backend.Turn{SessionID: "sess_1", Cwd: "/ws", Mode: backend.ModeAsk,
		Tools: &backend.TurnTools{URL: "http://127.0.0.1:1/mcp", Token: "tok", Relay: relay}}
	start := threadParams(turn)
	acp := start.Config["mcp_servers.acp"].(protocol.MCPServerConfig)
	if acp.Command != "/bin/codexacp" || !slices.Equal(acp.Args, []string{"mcp-relay"}) || acp.URL != "" || acp.HTTPHeaders != nil ||
		!maps.Equal(acp.Env, map[string]string{"SOCK": "/tmp/d/s", "TOKVAR": "tok"}) ||
		!acp.Required || acp.DefaultToolsApprovalMode != "approve" || acp.ToolTimeoutSec != 86400 {
		t.Errorf("our tool server = %+v", acp)
	}
	if relay.Env["TOKVAR"] != "" {
		t.Error("the turn's relay Env was changed")
	}
	b, _ := json.Marshal(start)
	if strings.Count(string(b), "tok\"") != 1 {
		t.Errorf("token in the params %d times: %s", strings.Count(string(b), "tok\""), b)
	}
}

// answeringOutput answers every approval with one decision.
type answeringOutput struct {
	backendtest.NopOutput
	decision backend.ApprovalDecision
	asked    []backend.CommandApproval
}

func (o *answeringOutput) ApproveCommand(_ context.Context, req backend.CommandApproval) backend.ApprovalDecision {
	o.asked = append(o.asked, req)
	return o.decision
}

func TestTurnHandlerRequests(t *testing.T) {
	for _, tc := range []struct {
		method, params string
		decision       backend.ApprovalDecision
		want           string // the JSON answer, or the error code
	}{
		{"item/commandExecution/requestApproval", `{"itemId":"c1","command":"touch x","cwd":"/ws","reason":"why"}`, backend.ApprovalAccept, `{"decision":"accept"}`},
		{"item/commandExecution/requestApproval", `{"itemId":"c1"}`, backend.ApprovalAcceptForSession, `{"decision":"acceptForSession"}`},
		{"item/commandExecution/requestApproval", `{"itemId":"c1"}`, backend.ApprovalDecline, `{"decision":"decline"}`},
		{"item/commandExecution/requestApproval", `{"itemId":"c1"}`, backend.ApprovalCancel, `{"decision":"cancel"}`},
		{"item/commandExecution/requestApproval", `[1]`, backend.ApprovalAccept, "-32602"},
		{"item/fileChange/requestApproval", `{}`, backend.ApprovalAccept, `{"decision":"decline"}`},
		{"mcpServer/elicitation/request", `{}`, backend.ApprovalAccept, `{"action":"decline"}`},
		{"item/permissions/requestApproval", `{}`, backend.ApprovalAccept, `{"permissions":{}}`},
		// An output that cannot ask the user leaves codex's questions unanswered.
		{"item/tool/requestUserInput", `{"itemId":"q","questions":[{"id":"a","header":"h","question":"?"}]}`, backend.ApprovalAccept, `{"answers":{}}`},
		{"item/tool/requestUserInput", `[1]`, backend.ApprovalAccept, "-32602"},
		{"item/tool/call", `{}`, backend.ApprovalAccept, "-32601"},
	} {
		out := &answeringOutput{decision: tc.decision}
		h := NewTurnHandler(out, testkit.DiscardLogger())
		res, err := h.Request(context.Background(), tc.method, json.RawMessage(tc.params))
		got := ""
		var rpc *codexapp.RPCError
		switch {
		case errors.As(err, &rpc):
			got = fmt.Sprint(rpc.Code)
		case err != nil:
			got = err.Error()
		default:
			got = jsonString(res)
		}
		if got != tc.want {
			t.Errorf("%s %s: got %s, want %s", tc.method, tc.params, got, tc.want)
		}
	}
	out := &answeringOutput{decision: backend.ApprovalAccept}
	NewTurnHandler(out, testkit.DiscardLogger()).Request(context.Background(), "item/commandExecution/requestApproval",
		json.RawMessage(`{"itemId":"c1","command":"touch x","cwd":"/ws","reason":"why"}`))
	if len(out.asked) != 1 || out.asked[0] != (backend.CommandApproval{ItemID: "c1", Command: "touch x", Cwd: "/ws", Reason: "why"}) {
		t.Errorf("asked %+v", out.asked)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The handler tells when a turn completed, even when turn/completed came
// before the caller learnt the turn's id.
func TestTurnHandlerEnded(t *testing.T) {
	h := NewTurnHandler(&answeringOutput{}, testkit.DiscardLogger())
	h.Notify("turn/completed", json.RawMessage(`{"threadId":"th","turn":{"id":"t1","status":"completed"}}`))
	select {
	case <-h.Ended("t1"):
	default:
		t.Fatal("t1 not ended")
	}
	select {
	case <-h.Ended("t2"):
		t.Fatal("t2 ended")
	default:
	}
	h.Notify("turn/completed", json.RawMessage(`{"threadId":"th","turn":{"id":"t1","status":"completed"}}`)) // twice: no panic
}

// countingOutput counts the events it receives.
type countingOutput struct {
	answeringOutput
	events int
}

func (o *countingOutput) Event(events.Event) { o.events++ }

// A handler delivers only its own turn's notifications, and nothing once
// its turn has ended.
func TestTurnHandlerDropsOthers(t *testing.T) {
	out := &countingOutput{}
	h := NewTurnHandler(out, testkit.DiscardLogger())
	delta := func(turn string) json.RawMessage {
		return json.RawMessage(`{"threadId":"th","turnId":"` + turn + `","itemId":"m","delta":"x"}`)
	}
	h.Notify("item/agentMessage/delta", delta("t1")) // before the id is known: taken
	h.Started("t1")
	h.Notify("item/agentMessage/delta", delta("t0")) // a late one of an earlier turn
	h.Notify("item/agentMessage/delta", delta("t1"))
	h.Close()
	h.Notify("item/agentMessage/delta", delta("t1"))
	if out.events != 2 {
		t.Errorf("events delivered = %d, want 2", out.events)
	}
}

// A prompt cancelled while the app-server is still starting answers at
// once; the start goes on for whoever needs it next, and Close cuts it short.
func TestAppServerCancelDuringStart(t *testing.T) {
	release := make(chan struct{})
	b := New(codexapp.Options{Logger: testkit.DiscardLogger()})
	b.start = func(ctx context.Context, _ codexapp.Options) (*codexapp.Server, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, errors.New("no app-server in this test")
	}
	b.Warm(backend.Turn{SessionID: "s"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx, backend.Turn{SessionID: "s", Prompt: "hi"}, &answeringOutput{}) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want cancelled", err)
	}
	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	<-closed // Close ends the pending start (release never happens)
	close(release)
}

// A session closed before its first prompt leaves nothing of its warmed
// thread in the backend.
func TestAppServerForgetsWarmedThread(t *testing.T) {
	b := New(codexapp.Options{Path: filepath.Join(t.TempDir(), "no-codex")})
	defer b.Close()
	b.Warm(backend.Turn{SessionID: "sess_a"})
	b.Warm(backend.Turn{SessionID: "sess_b"})
	b.Forget("sess_a")
	b.mu.Lock()
	_, a := b.prepared["sess_a"]
	_, bb := b.prepared["sess_b"]
	b.mu.Unlock()
	if a || !bb {
		t.Errorf("prepared after Forget(sess_a): sess_a %v, sess_b %v; want only sess_b", a, bb)
	}
}

// shAppServer is a stand-in `codex app-server` in sh: it answers
// initialize, config/read (workspace-write where a cwd is named) and
// thread/start.
const shAppServer = `#!/bin/sh
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
  case "$line" in
  *'"method":"initialize"'*) echo "{\"id\":$id,\"result\":{\"userAgent\":\"sh\"}}" ;;
  *'"method":"config/read"'*'"cwd":'*) echo "{\"id\":$id,\"result\":{\"config\":{\"sandbox_mode\":\"workspace-write\",\"approval_policy\":\"never\"}}}" ;;
  *'"method":"config/read"'*) echo "{\"id\":$id,\"result\":{\"config\":{}}}" ;;
  *'"method":"thread/start"'*) echo "{\"id\":$id,\"result\":{\"thread\":{\"id\":\"th1\"}}}" ;;
  esac
done
`

// A session's project settings are read from the backend's own app-server,
// which the session's thread then starts in: one codex, not a second one
// for the settings.
func TestAppServerReadUserConfigUsesItsServer(t *testing.T) {
	script := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(script, []byte(shAppServer), 0o755); err != nil {
		t.Fatal(err)
	}
	b := New(codexapp.Options{Path: script, Logger: testkit.DiscardLogger()})
	defer b.Close()
	var starts atomic.Int32
	b.start = func(ctx context.Context, opts codexapp.Options) (*codexapp.Server, error) {
		starts.Add(1)
		return codexapp.Start(ctx, opts)
	}
	ctx := context.Background()
	uc, err := b.ReadUserConfig(ctx, "/w")
	if err != nil || uc.SandboxMode != codex.SandboxWorkspaceWrite || uc.ApprovalPolicy != codex.ApprovalNever {
		t.Fatalf("ReadUserConfig = %+v, %v; want the project's", uc, err)
	}
	b.Warm(backend.Turn{SessionID: "s", Cwd: "/w"})
	p := b.awaitPrepared(ctx, "s")
	if p == nil || p.err != nil || p.thread != "th1" {
		t.Fatalf("prepared = %+v", p)
	}
	if n := starts.Load(); n != 1 {
		t.Errorf("%d app-servers started, want 1", n)
	}
}

// The app-server's skills/changed reaches the listings before the refresh
// it triggers lists anything.
func TestAppServerSkillsChangedStartsANewGeneration(t *testing.T) {
	b := New(codexapp.Options{Logger: testkit.DiscardLogger()})
	defer b.Close()
	refreshed := make(chan uint64, 1)
	b.WatchSkills(func() {
		refreshed <- b.listings.Generation()
	})
	b.unrouted("skills/changed", nil)
	select {
	case gen := <-refreshed:
		if gen != 1 {
			t.Errorf("the refresh saw generation %d, want 1", gen)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("skills/changed did not refresh")
	}
}
