package appserver

import (
	"encoding/json"
	"testing"
)

func TestRateLimitStore(t *testing.T) {
	var r rateLimitStore
	if r.notify("skills/changed", nil) || r.latest() != nil {
		t.Fatal("another method was taken")
	}
	updated := json.RawMessage(`{"rateLimits":{"limitId":"codex","primary":{"usedPercent":100,"windowDurationMins":300,"resetsAt":1795828807},"secondary":null,"credits":null}}`)
	if !r.notify("account/rateLimits/updated", updated) || r.latest() == nil || r.latest().Primary.UsedPercent != 100 {
		t.Fatalf("latest = %+v", r.latest())
	}
	// An all-null snapshot (a response without the headers) keeps what was known.
	r.notify("account/rateLimits/updated", json.RawMessage(`{"rateLimits":{"limitId":"codex","primary":null,"secondary":null,"credits":null}}`))
	if r.latest() == nil || r.latest().Primary == nil {
		t.Error("an empty snapshot erased the limits")
	}
	r.notify("account/rateLimits/updated", json.RawMessage(`{"rateLimits":{"limitId":"gpt-x","primary":{"usedPercent":5}}}`))
	r.notify("account/rateLimits/updated", json.RawMessage(`not json`))
	if all := r.all(); len(all) != 2 || all[0].LimitID != "codex" || all[1].LimitID != "gpt-x" {
		t.Errorf("all = %+v", all)
	}
}
