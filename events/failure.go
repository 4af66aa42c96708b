package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// FailureKind is what ended a failed turn, as the user needs to know it:
// each kind has its own action (docs/errors.md).
type FailureKind string

// Kinds of failure. ClassifyFailure reads them from codex's codexErrorInfo
// (app-server) or, where codex gives only text (exec), from codex's fixed
// messages.
const (
	FailureContextWindow FailureKind = "context_window" // the conversation no longer fits the model's context
	FailureUsageLimit    FailureKind = "usage_limit"    // the plan's usage limit, credits or spend cap
	FailureRateLimited   FailureKind = "rate_limited"   // HTTP 429 after codex's retries
	FailureOverloaded    FailureKind = "overloaded"     // the model is at capacity, or OpenAI's servers fail
	FailureUnauthorized  FailureKind = "unauthorized"   // OpenAI (or the custom model provider) refused codex's credentials
	FailurePolicy        FailureKind = "policy"         // a usage policy or hook blocked the request
	FailureConnection    FailureKind = "connection"     // the model API could not be reached, or the stream broke
	FailureBadRequest    FailureKind = "bad_request"    // the API refused the request as invalid
	FailureModel         FailureKind = "model"          // the model is unknown or its service tier unavailable
	FailureBudget        FailureKind = "budget"         // the session's token budget is spent
	FailureDenials       FailureKind = "denials"        // too many of codex's actions were refused
	FailureSandbox       FailureKind = "sandbox"        // codex's sandbox failed
	FailureOther         FailureKind = "other"          // anything else: codex's own words
)

// Failure is what to tell the user about a failed turn, and how the prompt
// ends: with StopReason after Message was shown, or, when AuthRequired,
// with ACP's auth_required error carrying Message (the client then offers
// sign-in). A failed turn is never codexacp's internal error.
type Failure struct {
	Kind         FailureKind
	Message      string // the cause and what to do, for the user
	StopReason   acpsdk.StopReason
	AuthRequired bool
}

// FailureContext is what ClassifyFailure needs besides codex's error.
type FailureContext struct {
	// Now is the time reset times are told from, in its location.
	Now time.Time
	// Limits are the account's latest usage windows (app-server's
	// account/rateLimits/updated), for when a usage limit resets; nil:
	// unknown.
	Limits *RateLimits
	// CanCompact says /compact is offered (the app-server backend).
	CanCompact bool
	// Shown says codex's own message already reached the user (exec prints
	// an error event before turn.failed): it is not repeated.
	Shown bool
	// CustomProvider is the model provider codex uses when it is not
	// OpenAI's (model_provider in codex's config): a refused credential is
	// then that provider's key, which no sign-in fixes. "": OpenAI's.
	CustomProvider string
}

// Failure explains the outcome's failure; o.FailedMessage must be set.
func (o Outcome) Failure(c FailureContext) Failure {
	if o.FailedShown {
		c.Shown = true
	}
	return ClassifyFailure(o.FailedMessage, o.FailedInfo, c)
}

// ClassifyFailure explains a failed turn from codex's message and its
// codexErrorInfo (nil from codex exec, which prints only the message).
func ClassifyFailure(message string, info json.RawMessage, c FailureContext) Failure {
	kind, status := failureKind(message, info)
	f := Failure{Kind: kind, StopReason: acpsdk.StopReasonEndTurn}
	var head string
	detail := true // codex's message follows ours
	switch kind {
	case FailureContextWindow:
		// Codex's message ("Start a new thread or clear earlier history")
		// names neither of the actions codexacp offers.
		detail = false
		if c.CanCompact {
			head = "The conversation no longer fits in the model's context window. Run /compact to summarise it and go on, or start a new session."
		} else {
			head = "The conversation no longer fits in the model's context window. Start a new session (this backend has no /compact; `--backend app-server` has)."
		}
	case FailureUsageLimit:
		if resets := resetClause(c.Limits, c.Now); resets != "" {
			head = "You have reached your Codex usage limit; it resets " + resets + ". Wait until then, or add credits or change your plan (https://chatgpt.com/codex/settings/usage)."
		} else {
			head = "You have reached your Codex usage limit. Wait until it resets, or add credits or change your plan (https://chatgpt.com/codex/settings/usage)."
		}
	case FailureRateLimited:
		head = "OpenAI is rate-limiting codex's requests (HTTP 429), and codex's retries ran out. Wait a minute, then send the prompt again."
	case FailureOverloaded:
		head = "The model is overloaded right now. Send the prompt again in a moment, or pick another model."
		if status >= 500 || strings.EqualFold(infoName(info), "internalServerError") {
			head = "OpenAI's servers failed to answer" + statusClause(status) + ". Send the prompt again in a moment; if it keeps failing, see https://status.openai.com."
		}
	case FailureUnauthorized:
		if c.CustomProvider != "" {
			// No sign-in is offered for it (initialize lists none), so
			// auth_required would lead nowhere.
			head = fmt.Sprintf("The model provider %q refused codex's credentials%s. Check its API key (the environment variable its env_key names in codex's config.toml, set where the editor starts the agent) and its [model_providers.%s] settings there, then send the prompt again.",
				c.CustomProvider, statusClause(status), c.CustomProvider)
			break
		}
		f.AuthRequired = true
		f.StopReason = ""
		head = "OpenAI refused codex's credentials" + statusClause(status) + ". Sign in again (`codex login`, or the editor's sign-in), or check the API key (OPENAI_API_KEY or CODEX_API_KEY, or the one saved with `codex login --with-api-key`), then retry."
	case FailurePolicy:
		f.StopReason = acpsdk.StopReasonRefusal
		head = policyHead(infoName(info))
	case FailureConnection:
		head = "Codex lost the connection to the model API" + statusClause(status) + ". Check the network (a proxy, a VPN), then send the prompt again."
	case FailureBadRequest:
		head = "The model API refused codex's request as invalid" + statusClause(status) + ". If it repeats, start a new session or pick another model."
	case FailureModel:
		head = "The selected model or its service tier is not available. Pick another model (or turn fast mode off), then send the prompt again."
	case FailureBudget:
		head = "This session has used its token budget. Start a new session to go on."
	case FailureDenials:
		head = "The turn stopped because too many of codex's actions were refused. Say what codex may do, or change the mode, then send the prompt again."
	case FailureSandbox:
		head = "Codex's sandbox failed to run a command. `codexacp doctor` checks the sandbox; another mode may run without it."
	default:
		head = "Codex could not finish the turn."
	}
	f.Message = "⚠ " + head
	// The auth_required error stands alone, apart from the transcript.
	if msg := apiMessage(message); detail && (!c.Shown || f.AuthRequired) && msg != "" {
		f.Message += "\n\nCodex said: " + msg
	}
	return f
}

// failureKind classifies codex's error, and the HTTP status it names
// (0: none).
func failureKind(message string, info json.RawMessage) (FailureKind, int) {
	name, status := infoName(info), infoStatus(info)
	switch name {
	case "contextWindowExceeded":
		return FailureContextWindow, 0
	case "usageLimitExceeded":
		return FailureUsageLimit, 0
	case "serverOverloaded", "internalServerError", "policyCapacityUnavailable":
		return FailureOverloaded, status
	case "unauthorized":
		return FailureUnauthorized, status
	case "cyberPolicy", "bioPolicy", "misalignmentPolicyViolation", "inferenceHookDenied":
		return FailurePolicy, 0
	case "badRequest":
		return FailureBadRequest, status
	case "modelNotFound", "flexUnavailable":
		return FailureModel, status
	case "sessionBudgetExceeded":
		return FailureBudget, 0
	case "tooManyDenials":
		return FailureDenials, 0
	case "sandboxError":
		return FailureSandbox, 0
	case "httpConnectionFailed", "responseStreamConnectionFailed", "responseStreamDisconnected", "responseTooManyFailedAttempts":
		// Codex reports an HTTP error status it does not know more of in
		// these too: 401 (a wrong API key) comes as httpConnectionFailed.
		switch {
		case status == 401:
			return FailureUnauthorized, status
		case status == 429:
			return FailureRateLimited, status
		case status >= 500:
			return FailureOverloaded, status
		case status == 400:
			return FailureBadRequest, status
		case status != 0:
			return FailureOther, status // 403 (a blocked region, an organisation without access), 404…
		}
		return FailureConnection, status
	}
	// Exec, and codexErrorInfo "other" or one this version does not know:
	// codex's fixed messages (codex-rs/protocol's error texts).
	return kindFromMessage(message)
}

// messageKinds maps text in codex's messages to kinds, first match wins.
// Codex writes some with a typographic apostrophe.
var messageKinds = []struct {
	text   string
	kind   FailureKind
	status int
}{
	{"ran out of room in the model's context window", FailureContextWindow, 0},
	{"context_length_exceeded", FailureContextWindow, 0},
	{"hit your usage limit", FailureUsageLimit, 0},
	{"hit your spend cap", FailureUsageLimit, 0},
	{"workspace is out of credits", FailureUsageLimit, 0},
	{"Quota exceeded. Check your plan", FailureUsageLimit, 0},
	{"To use Codex with your ChatGPT plan, upgrade", FailureUsageLimit, 0},
	{"401 Unauthorized", FailureUnauthorized, 401},
	{"last status: 429", FailureRateLimited, 429},
	{"429 Too Many Requests", FailureRateLimited, 429},
	{"Selected model is at capacity", FailureOverloaded, 0},
	{"currently experiencing high demand", FailureOverloaded, 500},
	{"last status: 5", FailureOverloaded, 500},
	{"unexpected status 5", FailureOverloaded, 500},
	{"unexpected status 400", FailureBadRequest, 400},
	{"invalid_request_error", FailureBadRequest, 400},
	{"stream disconnected before completion", FailureConnection, 0},
	{"Connection failed:", FailureConnection, 0},
	{"Error while reading the server response", FailureConnection, 0},
	{"request timed out", FailureConnection, 0},
	{"sandbox error:", FailureSandbox, 0},
}

func kindFromMessage(message string) (FailureKind, int) {
	m := strings.ReplaceAll(message, "’", "'")
	for _, k := range messageKinds {
		if strings.Contains(m, k.text) {
			return k.kind, k.status
		}
	}
	return FailureOther, 0
}

// infoName is the variant of a codexErrorInfo: the string, or the one key
// of the object ({"httpConnectionFailed": {...}}); "" for none.
func infoName(info json.RawMessage) string {
	if len(info) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(info, &s) == nil {
		return s
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(info, &obj) != nil || len(obj) != 1 {
		return ""
	}
	for k := range obj {
		return k
	}
	return ""
}

// infoStatus is the httpStatusCode of an object codexErrorInfo; 0: none.
func infoStatus(info json.RawMessage) int {
	var obj map[string]struct {
		HTTPStatusCode *int `json:"httpStatusCode"`
	}
	if json.Unmarshal(info, &obj) != nil {
		return 0
	}
	for _, v := range obj {
		if v.HTTPStatusCode != nil {
			return *v.HTTPStatusCode
		}
	}
	return 0
}

func statusClause(status int) string {
	if status == 0 {
		return ""
	}
	return fmt.Sprintf(" (HTTP %d)", status)
}

func policyHead(name string) string {
	switch name {
	case "cyberPolicy":
		return "OpenAI's usage policy blocked this request as possibly harmful cybersecurity activity. Rephrase it, or leave that part out; nothing more ran."
	case "bioPolicy":
		return "OpenAI's usage policy blocked this request as possibly harmful biology content. Rephrase it, or leave that part out; nothing more ran."
	case "inferenceHookDenied":
		return "Your workspace's policy hook refused this request. Ask the workspace's administrator what it allows; nothing more ran."
	}
	return "OpenAI's usage policy blocked this request. Rephrase it, or leave that part out; nothing more ran."
}

// apiMessage is codex's message, with an API error body it quotes whole
// ({"error":{"message":…}}, an invalid request) reduced to its message.
func apiMessage(message string) string {
	message = strings.TrimSpace(message)
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if strings.HasPrefix(message, "{") && json.Unmarshal([]byte(message), &body) == nil && body.Error.Message != "" {
		return body.Error.Message
	}
	return message
}

// resetClause says when the usage limit resets ("at 14:05 UTC (in 2 h)"):
// the latest reset among the windows that are used up, told from now; ""
// when the limits do not say, or no window is used up: then the limit is
// another (credits, a spend cap), which no window's reset lifts.
func resetClause(l *RateLimits, now time.Time) string {
	if l == nil {
		return ""
	}
	var at int64
	for _, w := range windows(l) {
		if w.ResetsAt != nil && w.UsedPercent >= 100 && *w.ResetsAt > at {
			at = *w.ResetsAt
		}
	}
	if at == 0 {
		return ""
	}
	return whenText(time.Unix(at, 0), now)
}
