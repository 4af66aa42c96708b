package codex

import (
	"fmt"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// ContextWindow returns the context window, in tokens, of model in the model
// catalog at catalogPath. An empty model means codex's default: the listed
// model with the lowest priority number (codex's own choice;
// docs/codex.md#pinned-codex-facts).
func ContextWindow(catalogPath, model string) (int, error) {
	s, err := summarize(catalogPath)
	if err != nil {
		return 0, err
	}
	n, ok := s.ContextWindow(model)
	if !ok {
		return 0, fmt.Errorf("model %q is not in the catalog", model)
	}
	return n, nil
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
