package acp

import (
	"encoding/json"
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// limitsBackend runs cmdBackend's turn (it ends with a usage_update) and
// knows the account's usage limits when limits is set.
type limitsBackend struct {
	cmdBackend
	limits *events.RateLimits
}

func (b *limitsBackend) Capabilities() backend.Capabilities { return backend.RateLimits }
func (b *limitsBackend) LastRateLimits() *events.RateLimits { return b.limits }

// The usage_update at a turn's end carries the latest usage limits codex
// sent in its _meta; without any, none.
func TestUsageUpdateCarriesRateLimits(t *testing.T) {
	t.Parallel()
	reset := int64(1795828807)
	for _, tc := range []struct {
		name   string
		limits *events.RateLimits
		want   string // the _meta's JSON; "": none
	}{
		{"limits", &events.RateLimits{LimitID: "codex", Primary: &events.RateLimitWindow{UsedPercent: 42, ResetsAt: &reset}, PlanType: "plus"},
			`{"codex/rateLimits":{"limitId":"codex","planType":"plus","primary":{"resetsAt":1795828807,"usedPercent":42}}}`},
		{"none yet", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startAgent(t, &limitsBackend{limits: tc.limits}, fakeeditor.Options{})
			sid := h.newSession(t, t.TempDir())
			if _, err := h.prompt(sid, "hi"); err != nil {
				t.Fatal(err)
			}
			h.editor.Sync(h.ctx)
			var got []string
			for _, n := range h.editor.Updates() {
				if u := n.Update.UsageUpdate; u != nil {
					meta := ""
					if u.Meta != nil {
						b, _ := json.Marshal(u.Meta)
						meta = string(b)
					}
					got = append(got, meta)
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("usage_update _meta = %q, want [%q]", got, tc.want)
			}
		})
	}
}
