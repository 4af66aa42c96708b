package e2e_test

import (
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// Each failure the model API answers with ends the prompt saying what
// happened and what to do, on both backends (docs/errors.md); before,
// every one was -32603 "Codex turn failed: <codex's text>". Codex's
// retries are off (mockapi.CodexConfig): codex fails the turn at the
// first answer. Each failure has a session of its own: after a full
// context window codex's next turn first compacts (a model request of its
// own, "pre-sampling compact").
func TestModelFailuresSayWhatToDo(t *testing.T) { eachBackend(t, testModelFailuresSayWhatToDo) }

func testModelFailuresSayWhatToDo(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	compact := map[string]string{"exec": "Start a new session", "app-server": "Run /compact"}[backend]
	reset := time.Now().Add(3 * time.Hour)
	for _, tc := range []struct {
		name   string
		answer mockapi.Response
		want   []string
	}{
		{"context window", mockapi.ContextLengthExceeded(), []string{"context window", compact}},
		// The reset time reaches the app-server's message from the limits
		// codex sends (account/rateLimits/updated); exec has codex's text.
		{"usage limit", mockapi.UsageLimit(reset), []string{"usage limit", map[string]string{
			"exec": "try again at", "app-server": "it resets at " + resetClock(reset)}[backend]}},
	} {
		e.session = e.newSession()
		n := len(e.editor.Updates())
		e.mock.Enqueue(tc.answer)
		resp, err := e.prompt("hi")
		if err != nil {
			t.Fatalf("%s: prompt failed with %v, want a stop reason", tc.name, err)
		}
		if resp.StopReason != acpsdk.StopReasonEndTurn {
			t.Errorf("%s: stopReason %q", tc.name, resp.StopReason)
		}
		if err := e.editor.Sync(e.ctx); err != nil {
			t.Fatal(err)
		}
		text := agentTextSince(e, n)
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: agent text lacks %q:\n%s", tc.name, w, text)
			}
		}
	}

	// The mock is a custom model provider in codex's config: its refusing
	// the credentials ends the turn saying to check the provider's key (no
	// sign-in fixes it; OpenAI's 401 answers auth_required:
	// TestAuthAPIKeyReplacesSavedKey).
	e.session = e.newSession()
	n := len(e.editor.Updates())
	e.mock.Enqueue(mockapi.Unauthorized())
	resp, err := e.prompt("hi")
	if err := e.editor.Sync(e.ctx); err != nil {
		t.Fatal(err)
	}
	if text := agentTextSince(e, n); err != nil || resp.StopReason != acpsdk.StopReasonEndTurn || !strings.Contains(text, "refused codex's credentials") {
		t.Errorf("401: %+v, %v, agent text %q; want end_turn saying the provider refused the credentials", resp, err, text)
	}

	// The session still works afterwards.
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("recovered")))
	if r := e.mustPrompt("again"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stopReason after the failures = %q", r.StopReason)
	}
	if n := len(e.mock.Requests()); n != 4 {
		t.Errorf("%d model requests, want 4 (codex retried a failure)", n)
	}
	e.checkSchema()
}

// /status shows the plan's usage windows codex read from the model API's
// x-codex-* headers (app-server); exec says it has none.
func TestSlashStatusUsageLimits(t *testing.T) { eachBackend(t, testSlashStatusUsageLimits) }

func testSlashStatusUsageLimits(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	reset := time.Now().Add(2 * time.Hour)
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("hello")).WithHeader(mockapi.RateLimitHeaders(
		mockapi.Window{UsedPercent: 42, Minutes: 300, ResetsAt: reset},
		&mockapi.Window{UsedPercent: 7, Minutes: 10080, ResetsAt: reset.Add(72 * time.Hour)})))
	e.mustPrompt("hi")
	commandNames(t, e)
	n := len(e.editor.Updates())
	// The turn's usage_update carries the limits in its _meta
	// ("codex/rateLimits": codex's snapshot) where the backend has them.
	var meta map[string]any
	for _, u := range e.editor.Updates() {
		if uu := u.Update.UsageUpdate; uu != nil {
			meta = uu.Meta
		}
	}
	limits, _ := meta["codex/rateLimits"].(map[string]any)
	primary, _ := limits["primary"].(map[string]any)
	if backend == "app-server" && (primary == nil || primary["usedPercent"] != float64(42)) {
		t.Errorf("usage_update _meta = %v, want codex/rateLimits with 42%% used", meta)
	}
	if backend == "exec" && meta != nil {
		t.Errorf("exec's usage_update _meta = %v, want none", meta)
	}
	e.mustPrompt("/status")
	if err := e.editor.Sync(e.ctx); err != nil {
		t.Fatal(err)
	}
	text := agentTextSince(e, n)
	clock := resetClock(reset)
	want := map[string][]string{
		"exec": {"Usage limits: not available with the exec backend"},
		"app-server": {"- Usage limit (5 h window): 42% used, resets at " + clock,
			"- Usage limit (7 days window): 7% used"},
	}[backend]
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("/status lacks %q:\n%s", w, text)
		}
	}
}

// resetClock is how /status and the failure text name a reset time: its
// date too when it is not today (a few hours ahead can be tomorrow).
func resetClock(at time.Time) string {
	if y, m, d := at.Date(); y != time.Now().Year() || m != time.Now().Month() || d != time.Now().Day() {
		return at.Format("Mon 2 Jan 15:04")
	}
	return at.Format("15:04")
}
