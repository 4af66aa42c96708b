package events

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// The messages are codex 0.169's, as `codex exec --json` printed them
// against the mock API (e2e/mockapi) with retries off, and the
// codexErrorInfo values as its app-server sent them for the same
// responses (docs/errors.md).
func TestClassifyFailure(t *testing.T) {
	now := time.Date(2026, 11, 27, 20, 20, 0, 0, time.UTC)
	reset := now.Add(5 * time.Hour).Unix()
	limits := &RateLimits{LimitID: "codex", Primary: &RateLimitWindow{UsedPercent: 100, ResetsAt: &reset}}
	cases := []struct {
		name       string
		message    string
		info       string // JSON; "" for exec
		ctx        FailureContext
		kind       FailureKind
		stop       acpsdk.StopReason
		auth       bool
		want, dont []string // in Message, not in it
	}{
		{name: "context window, app-server", info: `"contextWindowExceeded"`, ctx: FailureContext{CanCompact: true},
			message: "Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.",
			kind:    FailureContextWindow, stop: acpsdk.StopReasonEndTurn,
			want: []string{"/compact", "new session"}, dont: []string{"Codex said", "Start a new thread"}},
		{name: "context window, exec",
			message: "Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.",
			kind:    FailureContextWindow, stop: acpsdk.StopReasonEndTurn,
			want: []string{"Start a new session", "no /compact"}},
		{name: "usage limit with the limits", info: `"usageLimitExceeded"`, ctx: FailureContext{Limits: limits},
			message: "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at Nov 28th, 2026 1:20 AM.",
			kind:    FailureUsageLimit, stop: acpsdk.StopReasonEndTurn,
			want: []string{"usage limit; it resets at Sat 28 Nov 01:20 UTC (in 5 h)", "Wait until then", "Codex said: You’ve hit"}},
		{name: "usage limit, no window used up (credits, a spend cap)", info: `"usageLimitExceeded"`,
			ctx:     FailureContext{Limits: &RateLimits{LimitID: "codex", Primary: &RateLimitWindow{UsedPercent: 42, ResetsAt: &reset}}},
			message: "Your workspace is out of credits. Add credits to continue.",
			kind:    FailureUsageLimit, stop: acpsdk.StopReasonEndTurn,
			want: []string{"Wait until it resets, or add credits"}, dont: []string{"it resets at", "(in 5 h)"}},
		{name: "usage limit, exec (codex's message says when)", ctx: FailureContext{Shown: true},
			message: "You’ve hit your usage limit. Try again at 1:20 AM.",
			kind:    FailureUsageLimit, stop: acpsdk.StopReasonEndTurn,
			want: []string{"Wait until it resets"}, dont: []string{"Codex said"}},
		{name: "workspace credits", message: "Your workspace is out of credits. Add credits to continue.", kind: FailureUsageLimit, stop: acpsdk.StopReasonEndTurn},
		{name: "401, app-server", info: `{"httpConnectionFailed":{"httpStatusCode":401}}`,
			message: "unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:1/v1/responses",
			kind:    FailureUnauthorized, auth: true, want: []string{"Sign in again", "codex login", "HTTP 401"}},
		{name: "401, exec", message: "unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:1/v1/responses",
			kind: FailureUnauthorized, auth: true},
		{name: "401, custom provider", info: `{"httpConnectionFailed":{"httpStatusCode":401}}`, ctx: FailureContext{CustomProvider: "ollama"},
			message: "unexpected status 401 Unauthorized: invalid key, url: http://127.0.0.1:1/v1/responses",
			kind:    FailureUnauthorized, stop: acpsdk.StopReasonEndTurn,
			want: []string{`model provider "ollama" refused`, "HTTP 401", "env_key", "config.toml", "Codex said: unexpected status 401"},
			dont: []string{"OpenAI", "codex login", "Sign in"}},
		{name: "401, exec, custom provider", ctx: FailureContext{CustomProvider: "ollama", Shown: true},
			message: "unexpected status 401 Unauthorized: invalid key", kind: FailureUnauthorized, stop: acpsdk.StopReasonEndTurn,
			want: []string{`model provider "ollama" refused`}, dont: []string{"Codex said"}},
		{name: "unauthorized (refresh token failed)", info: `"unauthorized"`, message: "Your access token could not be refreshed",
			kind: FailureUnauthorized, auth: true},
		{name: "429 without usage limit, app-server", info: `{"responseTooManyFailedAttempts":{"httpStatusCode":429}}`,
			message: "exceeded retry limit, last status: 429 Too Many Requests",
			kind:    FailureRateLimited, stop: acpsdk.StopReasonEndTurn, want: []string{"send the prompt again"}},
		{name: "429, exec", message: "exceeded retry limit, last status: 429 Too Many Requests", kind: FailureRateLimited, stop: acpsdk.StopReasonEndTurn},
		{name: "overloaded (503)", info: `"serverOverloaded"`, message: "Selected model is at capacity. Please try a different model.",
			kind: FailureOverloaded, stop: acpsdk.StopReasonEndTurn, want: []string{"again in a moment", "another model"}},
		{name: "500", info: `"internalServerError"`, message: "We’re currently experiencing high demand, which may cause temporary errors.",
			kind: FailureOverloaded, stop: acpsdk.StopReasonEndTurn, want: []string{"servers failed"}},
		{name: "500, exec", message: "We’re currently experiencing high demand, which may cause temporary errors.", kind: FailureOverloaded, stop: acpsdk.StopReasonEndTurn},
		{name: "bioPolicy (0.171)", info: `"bioPolicy"`, message: "blocked", kind: FailurePolicy, stop: acpsdk.StopReasonRefusal, want: []string{"usage policy", "biology"}},
		{name: "cyberPolicy", info: `"cyberPolicy"`, message: "blocked", kind: FailurePolicy, stop: acpsdk.StopReasonRefusal, want: []string{"cybersecurity"}},
		{name: "misalignment", info: `"misalignmentPolicyViolation"`, message: "blocked", kind: FailurePolicy, stop: acpsdk.StopReasonRefusal},
		{name: "inference hook", info: `"inferenceHookDenied"`, message: "denied", kind: FailurePolicy, stop: acpsdk.StopReasonRefusal, want: []string{"policy hook"}},
		{name: "bad request quoting the API's body", info: `"other"`,
			message: `{"error":{"code":null,"message":"Invalid value for model: no-such-model","param":null,"type":"invalid_request_error"}}` + "\n",
			kind:    FailureBadRequest, stop: acpsdk.StopReasonEndTurn, want: []string{"Codex said: Invalid value for model: no-such-model"}, dont: []string{`"error"`}},
		{name: "bad request", info: `"badRequest"`, message: "Invalid 'input'", kind: FailureBadRequest, stop: acpsdk.StopReasonEndTurn},
		{name: "stream disconnected", info: `{"responseStreamDisconnected":{"httpStatusCode":null}}`, message: "stream disconnected before completion: eof",
			kind: FailureConnection, stop: acpsdk.StopReasonEndTurn, want: []string{"network"}},
		{name: "connection failed, exec", message: "Connection failed: error sending request", kind: FailureConnection, stop: acpsdk.StopReasonEndTurn},
		{name: "403", info: `{"httpConnectionFailed":{"httpStatusCode":403}}`, message: "unexpected status 403 Forbidden: Country, region, or territory not supported",
			kind: FailureOther, stop: acpsdk.StopReasonEndTurn, want: []string{"Codex said: unexpected status 403"}},
		{name: "sandbox", info: `"sandboxError"`, message: "sandbox error: seccomp setup error", kind: FailureSandbox, stop: acpsdk.StopReasonEndTurn, want: []string{"codexacp doctor"}},
		{name: "session budget", info: `"sessionBudgetExceeded"`, message: "budget", kind: FailureBudget, stop: acpsdk.StopReasonEndTurn},
		{name: "model not found", info: `"modelNotFound"`, message: "model gpt-x not found", kind: FailureModel, stop: acpsdk.StopReasonEndTurn},
		{name: "flex unavailable", info: `"flexUnavailable"`, message: "flex", kind: FailureModel, stop: acpsdk.StopReasonEndTurn},
		{name: "too many denials", info: `"tooManyDenials"`, message: "denied", kind: FailureDenials, stop: acpsdk.StopReasonEndTurn},
		{name: "a variant a later codex adds", info: `{"somethingNew":{"x":1}}`, message: "something new broke",
			kind: FailureOther, stop: acpsdk.StopReasonEndTurn, want: []string{"Codex said: something new broke"}},
		{name: "anything else", message: "turn aborted", kind: FailureOther, stop: acpsdk.StopReasonEndTurn, want: []string{"Codex said: turn aborted"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.ctx.Now = now
			var info json.RawMessage
			if tc.info != "" {
				info = json.RawMessage(tc.info)
			}
			f := ClassifyFailure(tc.message, info, tc.ctx)
			if f.Kind != tc.kind || f.StopReason != tc.stop || f.AuthRequired != tc.auth {
				t.Errorf("kind, stop, auth = %q, %q, %v; want %q, %q, %v", f.Kind, f.StopReason, f.AuthRequired, tc.kind, tc.stop, tc.auth)
			}
			if !strings.HasPrefix(f.Message, "⚠ ") {
				t.Errorf("message %q does not start with ⚠", f.Message)
			}
			for _, w := range tc.want {
				if !strings.Contains(f.Message, w) {
					t.Errorf("message %q lacks %q", f.Message, w)
				}
			}
			for _, d := range tc.dont {
				if strings.Contains(f.Message, d) {
					t.Errorf("message %q has %q", f.Message, d)
				}
			}
		})
	}
}

// Every kind has its own explanation: none falls back to the generic one.
func TestClassifyFailureExplainsEveryKind(t *testing.T) {
	generic := ClassifyFailure("x", nil, FailureContext{}).Message
	for _, info := range []string{`"contextWindowExceeded"`, `"usageLimitExceeded"`, `"serverOverloaded"`, `"unauthorized"`,
		`"cyberPolicy"`, `"badRequest"`, `"modelNotFound"`, `"sessionBudgetExceeded"`, `"tooManyDenials"`, `"sandboxError"`,
		`{"responseStreamConnectionFailed":{"httpStatusCode":null}}`, `{"responseTooManyFailedAttempts":{"httpStatusCode":429}}`} {
		f := ClassifyFailure("x", json.RawMessage(info), FailureContext{})
		if f.Kind == FailureOther || strings.HasPrefix(f.Message, strings.Split(generic, "\n")[0]) {
			t.Errorf("%s: kind %q, message %q", info, f.Kind, f.Message)
		}
	}
}

func TestOutcomeFailureNotRepeated(t *testing.T) {
	tr := NewTranslator(Options{})
	tr.BeginTurn()
	msg := "exceeded retry limit, last status: 429 Too Many Requests"
	tr.Translate(Event{Type: TypeError, Message: msg})
	tr.Translate(Event{Type: TypeTurnFailed, Error: &ErrorInfo{Message: msg}})
	out := tr.EndTurn()
	if !out.FailedShown {
		t.Fatal("FailedShown is false after the same warning")
	}
	if f := out.Failure(FailureContext{}); strings.Contains(f.Message, "Codex said") {
		t.Errorf("message repeats codex's: %q", f.Message)
	}
	tr.BeginTurn()
	tr.Translate(Event{Type: TypeTurnFailed, Error: &ErrorInfo{Message: msg}})
	if out := tr.EndTurn(); out.FailedShown {
		t.Error("FailedShown carried over into the next turn")
	}
}

func TestNoticeIsItsOwnParagraph(t *testing.T) {
	tr := NewTranslator(Options{})
	tr.BeginTurn()
	tr.Translate(Event{Type: TypeError, Message: "warned"})
	ups := tr.Notice("⚠ explained")
	if len(ups) != 1 || ups[0].AgentMessageChunk == nil || ups[0].AgentMessageChunk.Content.Text.Text != "\n\n⚠ explained" {
		t.Fatalf("Notice = %+v", ups)
	}
}
