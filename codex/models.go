package codex

import (
	"cmp"
	"slices"
	"strings"
)

// Model is one model of codex's catalog, as an editor's model picker shows it.
type Model struct {
	Slug          string
	Name          string
	Description   string
	ContextWindow int
	DefaultEffort string   // reasoning effort codex uses when none is chosen
	Efforts       []string // reasoning efforts the model supports, lowest first
	ServiceTiers  []ServiceTier
}

// ServiceTier is a faster (or cheaper) way a model can be served, named by
// the catalog's service_tiers (e.g. id "priority", name "Fast").
type ServiceTier struct {
	ID, Name, Description string
}

// Models returns the models the catalog at catalogPath lists for users
// (visibility "list"), in codex's order (priority): the first is codex's
// default model.
func Models(catalogPath string) ([]Model, error) {
	s, err := summarize(catalogPath)
	if err != nil {
		return nil, err
	}
	return s.Models, nil
}

// catalogModel is what codexacp reads of one model of a catalog.
type catalogModel struct {
	Slug          string `json:"slug"`
	DisplayName   string `json:"display_name"`
	Description   string `json:"description"`
	ContextWindow int    `json:"context_window"`
	Priority      *int   `json:"priority"`
	Visibility    string `json:"visibility"`
	DefaultEffort string `json:"default_reasoning_level"`
	Efforts       []struct {
		Effort string `json:"effort"`
	} `json:"supported_reasoning_levels"`
	ServiceTiers []struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"service_tiers"`
}

// listedModels are the models of a catalog that users are shown, in
// codex's order (priority).
func listedModels(all []catalogModel) []Model {
	type ranked struct {
		Model
		priority int
	}
	var list []ranked
	for _, m := range all {
		if m.Slug == "" || m.Priority == nil || m.Visibility == "hide" {
			continue
		}
		model := Model{Slug: m.Slug, Name: cmp.Or(m.DisplayName, m.Slug), Description: m.Description,
			ContextWindow: m.ContextWindow, DefaultEffort: m.DefaultEffort}
		for _, e := range m.Efforts {
			if e.Effort != "" {
				model.Efforts = append(model.Efforts, e.Effort)
			}
		}
		for _, st := range m.ServiceTiers {
			if st.ID != "" {
				model.ServiceTiers = append(model.ServiceTiers, ServiceTier{ID: st.ID, Name: cmp.Or(st.Name, st.ID), Description: st.Description})
			}
		}
		list = append(list, ranked{model, *m.Priority})
	}
	slices.SortStableFunc(list, func(a, b ranked) int { return cmp.Compare(a.priority, b.priority) })
	models := make([]Model, len(list))
	for i, r := range list {
		models[i] = r.Model
	}
	return models
}

// ConfiguredValue returns the value a list of -c key=value overrides gives
// key ("" when none does). Values are TOML; a quoted string is unquoted.
func ConfiguredValue(config []string, key string) string {
	found := ""
	for _, kv := range config {
		k, value, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) != key {
			continue
		}
		value = strings.TrimSpace(value)
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1]
		}
		found = value // the last override wins, as in codex
	}
	return found
}
