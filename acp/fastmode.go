package acp

import (
	"slices"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex"
)

// The fast-mode picker: codex's service tier (serviceTier on an app-server
// turn, kept by the thread until a turn changes or clears it). Offered
// when the session's model lists service tiers in codex's catalog (e.g.
// id "priority", named "Fast") and the backend can change it between turns:
// the app-server. Not on exec: codex exec takes -c service_tier= on a
// thread's first turn only, a resumed thread keeps the tier it started
// with (docs/codex.md#pinned-codex-facts), so a picker there would not do
// what it says. "off" is no tier, the standard speed.
const (
	configServiceTier = "service_tier"
)

// configuredServiceTier is the user's -c service_tier= as codex reads it:
// "fast" is its older name for "priority".
func (a *Agent) configuredServiceTier() string {
	if a.opts.DefaultServiceTier == "fast" {
		return "priority"
	}
	return a.opts.DefaultServiceTier
}

// sessionServiceTier is the picker's value for model m: the one chosen,
// else the user's configured tier when m has it, else off.
func (a *Agent) sessionServiceTier(s *session, m codex.Model) string {
	s.mu.Lock()
	tier := s.serviceTier
	s.mu.Unlock()
	tier = firstNonEmpty(tier, a.configuredServiceTier())
	if tier == backend.ServiceTierOff || !slices.ContainsFunc(m.ServiceTiers, func(t codex.ServiceTier) bool { return t.ID == tier }) {
		return backend.ServiceTierOff
	}
	return tier
}

// fastModeOption is the picker for model m; nil when m has no tiers or the
// backend cannot apply them.
func (a *Agent) fastModeOption(s *session, m codex.Model) []acpsdk.SessionConfigOption {
	if !a.can(backend.FastMode) || len(m.ServiceTiers) == 0 {
		return nil
	}
	choices := acpsdk.SessionConfigSelectOptionsUngrouped{selectOption(backend.ServiceTierOff, "Off", "Standard speed")}
	for _, t := range m.ServiceTiers {
		choices = append(choices, selectOption(t.ID, t.Name, t.Description))
	}
	o := selectConfig(configServiceTier, "Fast mode", "", a.sessionServiceTier(s, m), choices)
	o.Select.Category = nil
	return []acpsdk.SessionConfigOption{o}
}

// setServiceTier applies the picker's value from the next turn.
func (s *session) setServiceTier(tier string) {
	s.mu.Lock()
	s.serviceTier = tier
	s.mu.Unlock()
}

// turnServiceTier is the tier a turn asks codex for: nothing until the
// user chose (codex's configuration decides), then the picker's value,
// serviceTierOff being sent as no tier.
func (a *Agent) turnServiceTier(s *session) string {
	s.mu.Lock()
	chosen := s.serviceTier
	s.mu.Unlock()
	if chosen == "" {
		return ""
	}
	m, ok := a.sessionModel(s)
	if !ok {
		return ""
	}
	return a.sessionServiceTier(s, m)
}
