package acp

import (
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Mode is a session's permission mode. It decides codex's sandbox for shell
// commands and how the file tools treat writes.
type Mode string

const (
	// ModeReadOnly: the shell cannot write and the file tools refuse writes.
	ModeReadOnly Mode = "read-only"
	// ModeAsk: the shell cannot write; every file-tool write asks the editor.
	ModeAsk Mode = "ask"
	// ModeAuto: workspace-write sandbox; writes inside the workspace are applied without asking.
	ModeAuto Mode = "auto"
	// ModeFullAccess: no sandbox and no prompts.
	ModeFullAccess Mode = "full-access"
)

// DefaultMode is the mode of a new session.
const DefaultMode = ModeAsk

var allModes = []struct {
	mode        Mode
	name        string
	description string
}{
	{ModeReadOnly, "Read Only", "Codex can read files and run read-only commands; no edits."},
	{ModeAsk, "Ask", "Codex asks before each file edit; shell commands cannot write."},
	{ModeAuto, "Auto", "Codex edits files in the workspace and runs commands in a workspace-write sandbox."},
	{ModeFullAccess, "Full Access", "Codex edits any file and runs commands without a sandbox. Use with care."},
}

// Sandbox is codex's --sandbox value for the mode.
func (m Mode) Sandbox() string {
	switch m {
	case ModeAuto:
		return "workspace-write"
	case ModeFullAccess:
		return "danger-full-access"
	default:
		return "read-only"
	}
}

func parseMode(id string) (Mode, bool) {
	for _, m := range allModes {
		if string(m.mode) == id {
			return m.mode, true
		}
	}
	return "", false
}

func modeList() string {
	ids := make([]string, len(allModes))
	for i, m := range allModes {
		ids[i] = string(m.mode)
	}
	return strings.Join(ids, ", ")
}

func modeState(current Mode) *acpsdk.SessionModeState {
	st := &acpsdk.SessionModeState{CurrentModeId: acpsdk.SessionModeId(current)}
	for _, m := range allModes {
		st.AvailableModes = append(st.AvailableModes, acpsdk.SessionMode{
			Id:          acpsdk.SessionModeId(m.mode),
			Name:        m.name,
			Description: acpsdk.Ptr(m.description),
		})
	}
	return st
}
