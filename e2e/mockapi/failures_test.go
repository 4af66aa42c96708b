package mockapi

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

func TestScriptedFailures(t *testing.T) {
	s := New(t)
	reset := time.Unix(1795828807, 0)
	s.Enqueue(UsageLimit(reset), ContextLengthExceeded(), Unauthorized(),
		Reply(Message("ok")).WithHeader(RateLimitHeaders(Window{UsedPercent: 42, Minutes: 300, ResetsAt: reset},
			&Window{UsedPercent: 7, Minutes: 10080, ResetsAt: reset.Add(time.Hour)})))
	for i, want := range []struct {
		status int
		typ    string
		code   string
		header string
	}{
		{http.StatusTooManyRequests, "usage_limit_reached", "", "100"},
		{http.StatusBadRequest, "invalid_request_error", "context_length_exceeded", ""},
		{http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", ""},
		{http.StatusOK, "", "", "42"},
	} {
		resp := post(t, context.Background(), s.URL(), `{}`)
		var body struct {
			Error struct {
				Type     string `json:"type"`
				Code     string `json:"code"`
				ResetsAt int64  `json:"resets_at"`
			} `json:"error"`
		}
		if resp.StatusCode != http.StatusOK {
			json.NewDecoder(resp.Body).Decode(&body) //nolint:errcheck // checked below
		}
		resp.Body.Close()
		if resp.StatusCode != want.status || body.Error.Type != want.typ || body.Error.Code != want.code {
			t.Errorf("answer %d: %d %+v, want %d %q %q", i, resp.StatusCode, body.Error, want.status, want.typ, want.code)
		}
		if got := resp.Header.Get("x-codex-primary-used-percent"); got != want.header {
			t.Errorf("answer %d: x-codex-primary-used-percent %q, want %q", i, got, want.header)
		}
		if i == 0 && body.Error.ResetsAt != reset.Unix() {
			t.Errorf("usage limit resets_at %d, want %d", body.Error.ResetsAt, reset.Unix())
		}
		if i == 3 && resp.Header.Get("x-codex-secondary-window-minutes") != "10080" {
			t.Errorf("secondary window header %q", resp.Header.Get("x-codex-secondary-window-minutes"))
		}
	}
}
