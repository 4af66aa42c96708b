package events

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// rateLimitsUpdated is codex 0.169's account/rateLimits/updated after a
// response with x-codex-primary-* and x-codex-secondary-* headers (the
// mock API's 429 usage limit).
const rateLimitsUpdated = `{"rateLimits": {"limitId": "codex", "limitName": null, "normalModelSlug": null,
	"primary": {"usedPercent": 100, "windowDurationMins": 300, "resetsAt": 1795828807},
	"secondary": {"usedPercent": 40, "windowDurationMins": 10080, "resetsAt": 1796070007},
	"credits": null, "individualLimit": null, "spendControlReached": null, "planType": null, "rateLimitReachedType": null}}`

func TestParseRateLimitsUpdated(t *testing.T) {
	l, err := ParseRateLimitsUpdated(json.RawMessage(rateLimitsUpdated))
	if err != nil {
		t.Fatal(err)
	}
	if l.Empty() || l.LimitID != "codex" || l.Primary.UsedPercent != 100 || *l.Primary.WindowMinutes != 300 ||
		*l.Secondary.ResetsAt != 1796070007 || l.Credits != nil {
		t.Errorf("parsed %+v", l)
	}
	// After a response without the headers codex sends every field null.
	empty, err := ParseRateLimitsUpdated(json.RawMessage(`{"rateLimits":{"limitId":"codex","limitName":null,"primary":null,"secondary":null,"credits":null,"planType":null,"rateLimitReachedType":null}}`))
	if err != nil || !empty.Empty() {
		t.Errorf("all-null snapshot: %+v, %v; want Empty", empty, err)
	}
	for _, bad := range []string{`{}`, `[]`, `{"rateLimits":{"primary":{"usedPercent":"x"}}}`} {
		if _, err := ParseRateLimitsUpdated(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestParseRateLimitsRead(t *testing.T) {
	read := `{"rateLimits": {"limitId": "codex", "primary": {"usedPercent": 10}},
		"rateLimitsByLimitId": {"gpt-x": {"limitName": "GPT-X", "primary": {"usedPercent": 5}}, "codex": {"limitId": "codex", "primary": {"usedPercent": 10}, "credits": {"hasCredits": true, "unlimited": false, "balance": "12.50"}, "planType": "plus"}},
		"accountId": null, "ordinaryUsageAllowed": null, "rateLimitResetCredits": null}`
	ls, err := ParseRateLimitsRead(json.RawMessage(read))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].LimitID != "codex" || ls[1].LimitID != "gpt-x" || ls[0].Credits.Balance != "12.50" {
		t.Errorf("parsed %+v", ls)
	}
	single, err := ParseRateLimitsRead(json.RawMessage(`{"rateLimits": {"primary": {"usedPercent": 7}}, "rateLimitsByLimitId": null}`))
	if err != nil || len(single) != 1 || single[0].Primary.UsedPercent != 7 {
		t.Errorf("single: %+v, %v", single, err)
	}
	if _, err := ParseRateLimitsRead(json.RawMessage(`{"rateLimitsByLimitId": {}}`)); err == nil {
		t.Error("no limits: no error")
	}
}

func TestFormatRateLimits(t *testing.T) {
	now := time.Date(2026, 11, 27, 20, 20, 0, 0, time.UTC)
	l, err := ParseRateLimitsUpdated(json.RawMessage(rateLimitsUpdated))
	if err != nil {
		t.Fatal(err)
	}
	soon := now.Add(2*time.Hour + 9*time.Minute + 30*time.Second).Unix()
	past := now.Add(-time.Minute).Unix()
	five := int64(300)
	other := RateLimits{LimitID: "gpt-x", LimitName: "GPT-X", Primary: &RateLimitWindow{UsedPercent: 42, WindowMinutes: &five, ResetsAt: &soon},
		Secondary: &RateLimitWindow{UsedPercent: 3, ResetsAt: &past}, Credits: &Credits{Unlimited: true}, PlanType: "pro"}
	got := FormatRateLimits([]RateLimits{*l, other}, now)
	want := "- Usage limit (5 h window): 100% used, resets at Sat 28 Nov 01:20 UTC (in 5 h 1 min)\n" +
		"- Usage limit (7 days window): 40% used, resets at Mon 30 Nov 20:20 UTC (in 3 days)\n" +
		"- Usage limit of GPT-X (5 h window): 42% used, resets at 22:29 UTC (in 2 h 10 min)\n" +
		"- Usage limit of GPT-X: 3% used, resets now\n" +
		"- Credits: unlimited\n" +
		"- Plan: pro\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.TrimSpace(FormatRateLimits(nil, now)) != "" {
		t.Error("no limits: not empty")
	}
}
