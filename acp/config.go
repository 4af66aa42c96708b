package acp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex"
)

// Session config options (the editor's pickers). Model and effort apply
// from the next turn; mode is the same setting as session/set_mode.
// ModelInfo is what codex's model catalog tells the agent.
type ModelInfo struct {
	Catalog       string        // the catalog without apply_patch; empty: codex's own
	ContextWindow int           // of the configured model; 0: unknown
	Models        []codex.Model // for the model picker, codex's default first
}

const (
	configModel  = "model"
	configEffort = "reasoning_effort"
	configMode   = "mode"
)

// sessionModel is the model the session's turns use: the one chosen in the
// picker, else the user's -c model=, else the one in the user's codex
// configuration (config.toml, read through codex), else codex's default
// (the catalog's first). ok is false when no catalog is known.
func (a *Agent) sessionModel(s *session) (m codex.Model, ok bool) {
	s.mu.Lock()
	slug := s.model
	s.mu.Unlock()
	slug = firstNonEmpty(slug, a.opts.DefaultModel, s.user.Model)
	models := a.modelInfo().Models
	for _, m := range models {
		if slug == "" || m.Slug == slug {
			return m, true
		}
	}
	if slug != "" && len(models) > 0 {
		// Configured, but not listed (a hidden or custom model): offered
		// as is, with no effort choices.
		return codex.Model{Slug: slug, Name: slug}, true
	}
	return codex.Model{}, false
}

// sessionEffort is the reasoning effort of the session's turns with model
// m, as the effort picker shows it: the one chosen, else the user's -c
// model_reasoning_effort=, else the user's configured one (config.toml),
// else the model's default — one the model supports ("" when codex decides
// and the catalog says nothing).
func (a *Agent) sessionEffort(s *session, m codex.Model) string {
	s.mu.Lock()
	effort := s.effort
	s.mu.Unlock()
	effort = firstNonEmpty(effort, a.opts.DefaultEffort, s.user.ReasoningEffort, m.DefaultEffort)
	if len(m.Efforts) > 0 && !slices.Contains(m.Efforts, effort) {
		effort = firstNonEmpty(m.DefaultEffort, m.Efforts[0])
	}
	return effort
}

// contextWindow is the context window of the session's model m (ok as
// sessionModel answers): the catalog's for m, else the one read at
// start-up for the configured model.
func (a *Agent) contextWindow(m codex.Model, ok bool) int {
	if ok && m.ContextWindow > 0 {
		return m.ContextWindow
	}
	return a.modelInfo().ContextWindow
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// configOptions are the session's pickers with their current values.
func (a *Agent) configOptions(s *session) []acpsdk.SessionConfigOption {
	var opts []acpsdk.SessionConfigOption
	if m, ok := a.sessionModel(s); ok {
		var choices acpsdk.SessionConfigSelectOptionsUngrouped
		listed := false
		for _, c := range a.modelInfo().Models {
			listed = listed || c.Slug == m.Slug
			choices = append(choices, selectOption(c.Slug, c.Name, c.Description))
		}
		if !listed {
			choices = append(choices, selectOption(m.Slug, m.Name, ""))
		}
		opts = append(opts, selectConfig(configModel, "Model", acpsdk.SessionConfigOptionCategoryModel, m.Slug, choices))
		if len(m.Efforts) > 0 {
			var efforts acpsdk.SessionConfigSelectOptionsUngrouped
			for _, e := range m.Efforts {
				efforts = append(efforts, selectOption(e, effortName(e), ""))
			}
			opts = append(opts, selectConfig(configEffort, "Reasoning effort", acpsdk.SessionConfigOptionCategoryThoughtLevel, a.sessionEffort(s, m), efforts))
		}
		opts = append(opts, a.fastModeOption(s, m)...)
	}
	var choices acpsdk.SessionConfigSelectOptionsUngrouped
	for _, m := range modes(s.user) {
		choices = append(choices, selectOption(string(m.mode), m.name, m.description))
	}
	opts = append(opts, selectConfig(configMode, "Mode", acpsdk.SessionConfigOptionCategoryMode, string(s.currentMode()), choices))
	if o, ok := a.collabOption(s); ok {
		opts = append(opts, o)
	}
	return opts
}

func selectOption(value, name, description string) acpsdk.SessionConfigSelectOption {
	o := acpsdk.SessionConfigSelectOption{Value: acpsdk.SessionConfigValueId(value), Name: name}
	if description != "" {
		o.Description = acpsdk.Ptr(description)
	}
	return o
}

func selectConfig(id, name string, category acpsdk.SessionConfigOptionCategory, current string, choices acpsdk.SessionConfigSelectOptionsUngrouped) acpsdk.SessionConfigOption {
	return acpsdk.SessionConfigOption{Select: &acpsdk.SessionConfigOptionSelect{
		Id:           acpsdk.SessionConfigId(id),
		Name:         name,
		Category:     acpsdk.Ptr(category),
		CurrentValue: acpsdk.SessionConfigValueId(current),
		Options:      acpsdk.SessionConfigSelectOptions{Ungrouped: &choices},
		Type:         "select",
	}}
}

func effortName(e string) string {
	if e == "xhigh" {
		return "Extra high"
	}
	if e == "" {
		return e
	}
	return strings.ToUpper(e[:1]) + e[1:]
}

// SetSessionConfigOption implements acpsdk.Agent: it applies a picker's value
// from the next turn, stores it with the session, and answers (and
// announces) every option's current value.
func (a *Agent) SetSessionConfigOption(ctx context.Context, req acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	v := req.ValueId
	if v == nil {
		return acpsdk.SetSessionConfigOptionResponse{}, invalidParams("only select options are offered; the value must be a value id")
	}
	s, err := a.session(v.SessionId)
	if err != nil {
		return acpsdk.SetSessionConfigOptionResponse{}, err
	}
	value := string(v.Value)
	// The option's choices, and every option's id for the error.
	var ids, values []string
	found := false
	for _, o := range a.configOptions(s) {
		ids = append(ids, string(o.Select.Id))
		if string(o.Select.Id) == string(v.ConfigId) {
			found = true
			for _, c := range *o.Select.Options.Ungrouped {
				values = append(values, string(c.Value))
			}
		}
	}
	if !found {
		return acpsdk.SetSessionConfigOptionResponse{}, invalidParams(fmt.Sprintf("unknown config option %q (available: %s)", v.ConfigId, strings.Join(ids, ", ")))
	}
	if !slices.Contains(values, value) {
		return acpsdk.SetSessionConfigOptionResponse{}, invalidParams(fmt.Sprintf("unknown value %q for %s (available: %s)", value, v.ConfigId, strings.Join(values, ", ")))
	}
	switch string(v.ConfigId) {
	case configMode:
		s.setMode(backend.Mode(value))
		a.sendUpdate(ctx, s.id, acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{
			SessionUpdate: "current_mode_update",
			CurrentModeId: acpsdk.SessionModeId(value),
		}})
	case configCollab:
		s.setPlanning(value == collabPlan)
	case configModel:
		s.mu.Lock()
		s.model = value
		s.mu.Unlock()
		m, _ := a.sessionModel(s)
		s.mu.Lock()
		if !slices.Contains(m.Efforts, s.effort) {
			s.effort = "" // the new model's default
		}
		s.mu.Unlock()
	case configEffort:
		s.mu.Lock()
		s.effort = value
		s.mu.Unlock()
	case configServiceTier:
		s.setServiceTier(value)
	}
	a.persist(s)
	a.prepareNext(ctx, s, false)
	if v.ConfigId == configMode || v.ConfigId == configCollab {
		a.warmShellEdits(s)
	}
	opts := a.configOptions(s)
	a.sendUpdate(ctx, s.id, configUpdate(opts))
	return acpsdk.SetSessionConfigOptionResponse{ConfigOptions: opts}, nil
}

func configUpdate(opts []acpsdk.SessionConfigOption) acpsdk.SessionUpdate {
	return acpsdk.SessionUpdate{ConfigOptionUpdate: &acpsdk.SessionConfigOptionUpdate{
		SessionUpdate: "config_option_update",
		ConfigOptions: opts,
	}}
}

// turnModel is the model and effort a turn asks codex for: nothing until
// the user chose in the pickers (codex's own configuration decides), then
// what the pickers show; and the context window of the turn's model.
func (a *Agent) turnModel(s *session) (model, effort string, window int) {
	s.mu.Lock()
	model, effort = s.model, s.effort
	s.mu.Unlock()
	m, ok := a.sessionModel(s)
	window = a.contextWindow(m, ok)
	if ok && (model != "" || effort != "") {
		// Once the user chose, the effort shown is the one asked for: the
		// app-server keeps a turn's effort for the next turns, so a model
		// switch must not leave the old model's effort behind.
		effort = a.sessionEffort(s, m)
	}
	return model, effort, window
}

// SetSessionMode implements acpsdk.Agent.
func (a *Agent) SetSessionMode(ctx context.Context, req acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	s, err := a.session(req.SessionId)
	if err != nil {
		return acpsdk.SetSessionModeResponse{}, err
	}
	m, ok := parseMode(string(req.ModeId), s.user)
	if !ok {
		return acpsdk.SetSessionModeResponse{}, invalidParams(fmt.Sprintf("unknown mode %q (available: %s)", req.ModeId, modeList(s.user)))
	}
	s.setMode(m)
	a.persist(s)
	a.prepareNext(ctx, s, false)
	a.warmShellEdits(s) // a mode where the shell may write, after read-only
	a.sendUpdate(ctx, s.id, acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{
		SessionUpdate: "current_mode_update",
		CurrentModeId: acpsdk.SessionModeId(m),
	}})
	// The mode picker among the config options shows the same setting.
	a.sendUpdate(ctx, s.id, configUpdate(a.configOptions(s)))
	return acpsdk.SetSessionModeResponse{}, nil
}
