package codex

import (
	"bytes"
	"strings"
)

// skillSearchKey is the codex feature that, each turn, ranks the
// whole skill catalog against the prompt with twelve methods whose results
// are only logged (codex_skills_extension's "shadow selection
// experiment"): the model request is byte for byte the same without it,
// and it costs every turn CPU (measured: docs/codex-app-server.md).
const skillSearchKey = "skill_search"

// DefaultOverrides are the -c overrides codexacp puts in front of the
// user's own (overrides, whose later entries win) to spare every turn
// work that changes nothing the user or the model sees:
// features.skill_search=false, unless an override or a config file of
// codex's (home's config.toml, any file in /etc/codex) mentions
// skill_search — then the user's setting stands. env is codex's
// environment (for CODEX_HOME).
func DefaultOverrides(env, overrides []string) []string {
	if mentionsSkillSearch(codexHome(env), systemConfigDir, overrides) {
		return nil
	}
	return []string{"features." + skillSearchKey + "=false"}
}

// mentionsSkillSearch is a textual check, like userConfigUnset's: an
// override's key, or a config file that mentions skill_search or cannot be
// read (the user's setting may be there).
func mentionsSkillSearch(home, sysDir string, overrides []string) bool {
	for _, kv := range overrides {
		if key, _, _ := strings.Cut(kv, "="); strings.Contains(key, skillSearchKey) {
			return true
		}
	}
	return configFilesMayMention(home, sysDir, func(b []byte) bool { return bytes.Contains(b, []byte(skillSearchKey)) })
}
