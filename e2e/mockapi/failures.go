package mockapi

import (
	"net/http"
	"strconv"
	"time"
)

// The failures the OpenAI API answers with that codex turns into its
// error kinds (codexErrorInfo), as codex 0.169 reads them. With
// CodexConfig's retries off codex fails the turn at the first one; with
// its default retries it retries the 5xx and 401 answers (not these 429
// and 400 ones), see docs/errors.md.

// UsageLimit is HTTP 429 with a usage_limit_reached body, as OpenAI
// answers a ChatGPT plan whose usage window is spent: codex reports
// usageLimitExceeded and "You've hit your usage limit… try again at …".
// The headers say the primary window is used up until resetsAt (codex
// sends them on as account/rateLimits/updated).
func UsageLimit(resetsAt time.Time) Response {
	return Response{
		Status: http.StatusTooManyRequests,
		ErrorBody: map[string]any{
			"type":      "usage_limit_reached",
			"message":   "The usage limit has been reached",
			"plan_type": "plus",
			"resets_at": resetsAt.Unix(),
		},
		Header: RateLimitHeaders(Window{UsedPercent: 100, Minutes: 300, ResetsAt: resetsAt}, nil),
	}
}

// ContextLengthExceeded is HTTP 400 with code context_length_exceeded:
// codex reports contextWindowExceeded.
func ContextLengthExceeded() Response {
	return Response{
		Status: http.StatusBadRequest,
		ErrorBody: map[string]any{
			"type":    "invalid_request_error",
			"code":    "context_length_exceeded",
			"message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
			"param":   "input",
		},
	}
}

// Unauthorized is HTTP 401 as OpenAI answers a wrong API key: codex
// reports httpConnectionFailed with httpStatusCode 401.
func Unauthorized() Response {
	return Response{
		Status: http.StatusUnauthorized,
		ErrorBody: map[string]any{
			"type":    "invalid_request_error",
			"code":    "invalid_api_key",
			"message": "Incorrect API key provided",
			"param":   nil,
		},
	}
}

// Window is one usage window of the account, for RateLimitHeaders.
type Window struct {
	UsedPercent int
	Minutes     int
	ResetsAt    time.Time
}

// RateLimitHeaders are the x-codex-* headers from which codex reads the
// account's usage windows (primary: the short one; secondary may be nil).
func RateLimitHeaders(primary Window, secondary *Window) http.Header {
	h := http.Header{}
	set := func(name string, w Window) {
		h.Set("x-codex-"+name+"-used-percent", strconv.Itoa(w.UsedPercent))
		h.Set("x-codex-"+name+"-window-minutes", strconv.Itoa(w.Minutes))
		h.Set("x-codex-"+name+"-reset-at", strconv.FormatInt(w.ResetsAt.Unix(), 10))
	}
	set("primary", primary)
	if secondary != nil {
		set("secondary", *secondary)
	}
	return h
}

// WithHeader is r with h added to its answer.
func (r Response) WithHeader(h http.Header) Response {
	r.Header = h
	return r
}
