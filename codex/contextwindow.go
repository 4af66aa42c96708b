package codex

import (
	"encoding/json"
	"fmt"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// ContextWindow returns the context window, in tokens, of model in the model
// catalog at catalogPath. An empty model means codex's default: the listed
// model with the lowest priority number (codex's own choice;
// docs/codex.md#pinned-codex-facts).
func ContextWindow(catalogPath, model string) (int, error) {
	b, err := readCatalog(catalogPath)
	if err != nil {
		return 0, err
	}
	var catalog struct {
		Models []struct {
			Slug          string `json:"slug"`
			ContextWindow int    `json:"context_window"`
			Priority      *int   `json:"priority"`
			Visibility    string `json:"visibility"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &catalog); err != nil {
		return 0, fmt.Errorf("parsing model catalog %s: %w", catalogPath, err)
	}
	best := -1
	for i, m := range catalog.Models {
		if model != "" {
			if m.Slug == model {
				return m.ContextWindow, nil
			}
			continue
		}
		if m.Priority == nil || m.Visibility == "hide" {
			continue
		}
		if best < 0 || *m.Priority < *catalog.Models[best].Priority {
			best = i
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("model %q is not in the catalog", model)
	}
	return catalog.Models[best].ContextWindow, nil
}

// ConfiguredModel returns the model a list of -c key=value overrides selects
// ("" when none does). Values are TOML; a quoted string is unquoted.
func ConfiguredModel(config []string) string {
	return ConfiguredValue(config, "model")
}

// catalogMax bounds a model catalog read, far above a real catalog's size
// (docs/codex.md#pinned-codex-facts).
const catalogMax = 16 << 20

// readCatalog reads the model catalog at path (made by ModelCatalog in
// the user's cache directory): a regular file within catalogMax, opened
// without blocking.
func readCatalog(path string) ([]byte, error) {
	b, err := regularfile.ReadFile(path, catalogMax, regularfile.FollowLink)
	if err != nil {
		return nil, fmt.Errorf("reading model catalog: %w", err)
	}
	return b, nil
}
