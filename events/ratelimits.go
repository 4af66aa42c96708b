package events

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/codexacp/codexacp/codex/appserver/protocol"
)

// RateLimits is the app-server's RateLimitSnapshot: one metered limit of
// the account (limitId "codex", or a model's own) with its usage windows,
// as account/rateLimits/read answers and account/rateLimits/updated sends
// (codex reads them from the x-codex-* headers of every model response).
type RateLimits = protocol.RateLimitSnapshot

// RateLimitWindow is how much of one usage window is used.
type RateLimitWindow = protocol.RateLimitWindow

// Credits is the account's credit balance.
type Credits = protocol.CreditsSnapshot

// windows are the limit's usage windows that it names.
func windows(l *RateLimits) []*RateLimitWindow {
	var ws []*RateLimitWindow
	for _, w := range []*RateLimitWindow{l.Primary, l.Secondary} {
		if w != nil {
			ws = append(ws, w)
		}
	}
	return ws
}

// ParseRateLimitsUpdated reads the params of account/rateLimits/updated.
func ParseRateLimitsUpdated(params json.RawMessage) (*RateLimits, error) {
	p, err := protocol.AccountRateLimitsUpdated.Decode(params)
	if err != nil {
		return nil, err
	}
	if p.RateLimits == nil {
		return nil, fmt.Errorf("%s: no rateLimits", protocol.AccountRateLimitsUpdated.Method())
	}
	return p.RateLimits, nil
}

// ParseRateLimitsRead reads the answer to account/rateLimits/read (see
// RateLimitsRead).
func ParseRateLimitsRead(result json.RawMessage) ([]RateLimits, error) {
	var r protocol.GetAccountRateLimitsResponse
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", protocol.AccountRateLimitsRead.Method(), err)
	}
	return RateLimitsRead(r)
}

// RateLimitsRead are the limits of an answer to account/rateLimits/read:
// every limit of rateLimitsByLimitId ("codex" first, then by id), or the
// single rateLimits when codex sends no map.
func RateLimitsRead(r protocol.GetAccountRateLimitsResponse) ([]RateLimits, error) {
	var out []RateLimits
	for id, l := range r.RateLimitsByLimitID {
		if l == nil {
			continue
		}
		if l.LimitID == "" {
			l.LimitID = id
		}
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].LimitID, out[j].LimitID
		if (a == "codex") != (b == "codex") {
			return a == "codex"
		}
		return a < b
	})
	if len(out) == 0 && r.RateLimits != nil {
		out = append(out, *r.RateLimits)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rateLimits", protocol.AccountRateLimitsRead.Method())
	}
	return out, nil
}

// FormatRateLimits describes the limits as Markdown list items for
// /status, one per window: "- Usage limit (5 h window): 42% used, resets
// at 14:05 (in 2 h 10 min)". Times are told in now's location.
func FormatRateLimits(limits []RateLimits, now time.Time) string {
	var b strings.Builder
	for _, l := range limits {
		name := "Usage limit"
		if l.LimitName != "" && !strings.EqualFold(l.LimitName, "codex") {
			name = "Usage limit of " + l.LimitName
		} else if l.LimitID != "" && l.LimitID != "codex" {
			name = "Usage limit of " + l.LimitID
		}
		for _, w := range windows(&l) {
			fmt.Fprintf(&b, "- %s", name)
			if w.WindowMinutes != nil && *w.WindowMinutes > 0 {
				fmt.Fprintf(&b, " (%s window)", windowText(*w.WindowMinutes))
			}
			fmt.Fprintf(&b, ": %d%% used", w.UsedPercent)
			if w.ResetsAt != nil {
				fmt.Fprintf(&b, ", resets %s", whenText(time.Unix(*w.ResetsAt, 0), now))
			}
			b.WriteString("\n")
		}
		if c := l.Credits; c != nil {
			switch {
			case c.Unlimited:
				b.WriteString("- Credits: unlimited\n")
			case c.HasCredits && c.Balance != "":
				fmt.Fprintf(&b, "- Credits: %s\n", c.Balance)
			case !c.HasCredits:
				b.WriteString("- Credits: none\n")
			}
		}
		if l.PlanType != "" && l.PlanType != "unknown" {
			fmt.Fprintf(&b, "- Plan: %s\n", l.PlanType)
		}
	}
	return b.String()
}

// windowText names a window's length: "5 h", "7 days", "90 min".
func windowText(mins int64) string {
	switch {
	case mins%(24*60) == 0:
		if d := mins / (24 * 60); d != 1 {
			return fmt.Sprintf("%d days", d)
		}
		return "1 day"
	case mins%60 == 0:
		return fmt.Sprintf("%d h", mins/60)
	}
	return fmt.Sprintf("%d min", mins)
}

// whenText tells a moment relative to now: "at 14:05 (in 2 h 10 min)", or
// with its date when it is not today ("at Mon 2 Jan 14:05 (in 3 days)"),
// "now" once past.
func whenText(at, now time.Time) string {
	at = at.In(now.Location())
	d := at.Sub(now)
	if d <= 0 {
		return "now"
	}
	clock := at.Format("15:04")
	if y, m, day := at.Date(); y != now.Year() || m != now.Month() || day != now.Day() {
		clock = at.Format("Mon 2 Jan 15:04")
	}
	return "at " + clock + " " + at.Format("MST") + " (in " + durationText(d) + ")"
}

// durationText rounds a duration up to the minute: "45 min", "2 h 10
// min", "3 days 4 h".
func durationText(d time.Duration) string {
	mins := int64((d + time.Minute - 1) / time.Minute)
	days, hours, m := mins/(24*60), mins/60%24, mins%60
	switch {
	case days > 0 && hours > 0:
		return fmt.Sprintf("%s %d h", plural(days, "day"), hours)
	case days > 0:
		return plural(days, "day")
	case hours > 0 && m > 0:
		return fmt.Sprintf("%d h %d min", hours, m)
	case hours > 0:
		return fmt.Sprintf("%d h", hours)
	}
	return fmt.Sprintf("%d min", m)
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
