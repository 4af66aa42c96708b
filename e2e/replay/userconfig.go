package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/codexacp/codexacp/record"
)

// writeUserConfig puts the settings the recorded agent read from the
// user's codex configuration (the transcript's user_config entry) into the
// replay's codex home as config.toml. The replayed agent, like the
// recorded one, then finds settings there and asks codex for them; the fake
// codex answers config/read with the recorded settings. Without the entry
// nothing is written: the recorded agent found nothing to ask about.
func writeUserConfig(entries []record.Entry, codexHome string) error {
	var settings json.RawMessage
	for _, e := range entries {
		if e.Kind == record.KindUserConfig {
			settings = e.Result
		}
	}
	if settings == nil {
		return nil
	}
	var read struct {
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(settings, &read); err != nil {
		return fmt.Errorf("the transcript's user_config: %w", err)
	}
	var toml bytes.Buffer
	keys := make([]string, 0, len(read.Config))
	for k := range read.Config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if v := read.Config[k]; v != nil {
			fmt.Fprintf(&toml, "%s = %s\n", k, tomlValue(v))
		}
	}
	return os.WriteFile(filepath.Join(codexHome, "config.toml"), toml.Bytes(), 0o600)
}

// tomlValue is a JSON value (as encoding/json decodes it) in TOML: a table
// inline. JSON's string escapes are TOML's.
func tomlValue(v any) string {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var parts []string
		for _, k := range keys {
			if v[k] != nil {
				parts = append(parts, tomlValue(k)+" = "+tomlValue(v[k]))
			}
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = tomlValue(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}
