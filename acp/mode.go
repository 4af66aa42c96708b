package acp

import (
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/codex"
)

// DefaultMode is the mode of a new session when the user configured none
// of codex's sandbox and approval settings.
const DefaultMode = backend.ModeAsk

type modeInfo struct {
	mode        backend.Mode
	name        string
	description string
}

var presetModes = []modeInfo{
	{backend.ModeReadOnly, "Read Only", "Codex can read files and run read-only commands; no edits."},
	{backend.ModeAsk, "Ask", "Codex asks before each file edit; shell commands cannot write."},
	{backend.ModeAuto, "Auto", "Codex edits files in the workspace and runs commands in a workspace-write sandbox."},
	{backend.ModeFullAccess, "Full Access", "Codex edits any file and runs commands without a sandbox. Use with care."},
}

var customMode = modeInfo{backend.ModeCustom, "Your settings",
	"Codex's sandbox and approvals exactly as configured in your config.toml and -c options."}

// modes are the modes offered to a user with configuration user: the
// presets, and first the user's own settings when there are any.
func modes(user codex.UserConfig) []modeInfo {
	if !user.Configured() {
		return presetModes
	}
	return append([]modeInfo{customMode}, presetModes...)
}

// defaultMode is a new session's mode: the user's own settings when they
// configured any (someone who set approval_policy or writable_roots expects
// codex to follow them), else DefaultMode.
func defaultMode(user codex.UserConfig) backend.Mode {
	if user.Configured() {
		return backend.ModeCustom
	}
	return DefaultMode
}

func parseMode(id string, user codex.UserConfig) (backend.Mode, bool) {
	for _, m := range modes(user) {
		if string(m.mode) == id {
			return m.mode, true
		}
	}
	return "", false
}

func modeList(user codex.UserConfig) string {
	var ids []string
	for _, m := range modes(user) {
		ids = append(ids, string(m.mode))
	}
	return strings.Join(ids, ", ")
}

func modeState(current backend.Mode, user codex.UserConfig) *acpsdk.SessionModeState {
	st := &acpsdk.SessionModeState{CurrentModeId: acpsdk.SessionModeId(current)}
	for _, m := range modes(user) {
		st.AvailableModes = append(st.AvailableModes, acpsdk.SessionMode{
			Id:          acpsdk.SessionModeId(m.mode),
			Name:        m.name,
			Description: acpsdk.Ptr(m.description),
		})
	}
	return st
}
