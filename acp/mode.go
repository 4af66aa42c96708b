package acp

import (
	"slices"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/codex"
)

// Mode is a session's permission mode. It decides codex's sandbox and
// approval policy for shell commands and how the file tools treat writes.
// The presets (read-only, ask, auto, full-access) set the sandbox level and
// the approval policy and keep the rest of the user's codex configuration
// (writable roots, network access); ModeCustom applies the user's own
// settings. See docs/modes.md.
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
	// ModeCustom: the user's approval_policy, sandbox_mode and
	// [sandbox_workspace_write] exactly as configured. Offered, and the
	// default, only when the user configured any of them.
	ModeCustom Mode = "custom"
)

// DefaultMode is the mode of a new session when the user configured none
// of codex's sandbox and approval settings.
const DefaultMode = ModeAsk

type modeInfo struct {
	mode        Mode
	name        string
	description string
}

var presetModes = []modeInfo{
	{ModeReadOnly, "Read Only", "Codex can read files and run read-only commands; no edits."},
	{ModeAsk, "Ask", "Codex asks before each file edit; shell commands cannot write."},
	{ModeAuto, "Auto", "Codex edits files in the workspace and runs commands in a workspace-write sandbox."},
	{ModeFullAccess, "Full Access", "Codex edits any file and runs commands without a sandbox. Use with care."},
}

var customMode = modeInfo{ModeCustom, "Your settings",
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
func defaultMode(user codex.UserConfig) Mode {
	if user.Configured() {
		return ModeCustom
	}
	return DefaultMode
}

func parseMode(id string, user codex.UserConfig) (Mode, bool) {
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

func modeState(current Mode, user codex.UserConfig) *acpsdk.SessionModeState {
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

// policy is what a mode means to codex, layered on the user's
// configuration.
type policy struct {
	Sandbox  string // codex.Sandbox*
	Approval string // codex.Approval*
	// WorkspaceWrite, with Sandbox workspace-write: the user's table with
	// the session's additional directories added to the writable roots.
	WorkspaceWrite codex.WorkspaceWrite
	// Tools is the preset whose file-tool behaviour applies: the mode
	// itself, or for ModeCustom the preset that allows no more than the
	// user's settings.
	Tools Mode
	// granular is the user's approval_policy table when Approval is
	// ApprovalGranular, passed on as codex reported it.
	granular []byte
}

// modePolicy renders mode m on top of the user's configuration for a
// session whose additional workspace directories are dirs. A preset sets
// the sandbox level and the approval policy and nothing else: the user's
// writable roots, network access and /tmp exclusions stay as configured.
// A setting ModeCustom finds unset takes ask's value (codex's own default
// in a directory it does not trust).
func modePolicy(m Mode, user codex.UserConfig, dirs []string) policy {
	var p policy
	switch m {
	case ModeReadOnly:
		p = policy{Sandbox: codex.SandboxReadOnly, Approval: codex.ApprovalNever}
	case ModeAuto:
		p = policy{Sandbox: codex.SandboxWorkspaceWrite, Approval: codex.ApprovalOnRequest}
	case ModeFullAccess:
		p = policy{Sandbox: codex.SandboxDangerFullAccess, Approval: codex.ApprovalNever}
	case ModeCustom:
		p = policy{Sandbox: firstNonEmpty(user.SandboxMode, codex.SandboxReadOnly),
			Approval: firstNonEmpty(user.ApprovalPolicy, codex.ApprovalOnRequest), granular: user.GranularApproval}
	default:
		m = ModeAsk
		p = policy{Sandbox: codex.SandboxReadOnly, Approval: codex.ApprovalOnRequest}
	}
	p.Tools = m
	if m == ModeCustom {
		p.Tools = customTools(p)
	}
	if user.WorkspaceWrite != nil {
		p.WorkspaceWrite = *user.WorkspaceWrite
	}
	p.WorkspaceWrite.WritableRoots = slices.Clone(p.WorkspaceWrite.WritableRoots)
	for _, d := range dirs {
		if !slices.Contains(p.WorkspaceWrite.WritableRoots, d) {
			p.WorkspaceWrite.WritableRoots = append(p.WorkspaceWrite.WritableRoots, d)
		}
	}
	return p
}

// customTools is the preset whose file-tool behaviour matches the user's
// sandbox and approval policy without exceeding them: writes are applied
// without asking only where the user's sandbox lets commands write without
// asking, and refused where it never lets them write.
func customTools(p policy) Mode {
	switch p.Sandbox {
	case codex.SandboxDangerFullAccess:
		if p.Approval == codex.ApprovalNever || p.Approval == codex.ApprovalOnRequest {
			return ModeFullAccess
		}
		return ModeAsk
	case codex.SandboxWorkspaceWrite:
		if p.Approval == codex.ApprovalNever || p.Approval == codex.ApprovalOnRequest {
			return ModeAuto
		}
		return ModeAsk
	default:
		if p.Approval == codex.ApprovalNever {
			return ModeReadOnly
		}
		return ModeAsk
	}
}
