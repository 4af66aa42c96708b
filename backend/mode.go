package backend

import (
	"slices"

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

// Policy is what a mode means to codex, layered on the user's
// configuration.
type Policy struct {
	Sandbox  string // codex.Sandbox*
	Approval string // codex.Approval*
	// WorkspaceWrite, with Sandbox workspace-write: the user's table with
	// the session's additional directories added to the writable roots.
	WorkspaceWrite codex.WorkspaceWrite
	// Tools is the preset whose file-tool behaviour applies: the mode
	// itself, or for ModeCustom the preset that allows no more than the
	// user's settings.
	Tools Mode
	// Granular is the user's approval_policy table when Approval is
	// ApprovalGranular, passed on as codex reported it.
	Granular []byte
}

// ModePolicy renders mode m on top of the user's configuration for a
// session whose additional workspace directories are dirs. A preset sets
// the sandbox level and the approval policy and nothing else: the user's
// writable roots, network access and /tmp exclusions stay as configured.
// A setting ModeCustom finds unset takes ask's value (codex's own default
// in a directory it does not trust).
func ModePolicy(m Mode, user codex.UserConfig, dirs []string) Policy {
	var p Policy
	switch m {
	case ModeReadOnly:
		p = Policy{Sandbox: codex.SandboxReadOnly, Approval: codex.ApprovalNever}
	case ModeAuto:
		p = Policy{Sandbox: codex.SandboxWorkspaceWrite, Approval: codex.ApprovalOnRequest}
	case ModeFullAccess:
		p = Policy{Sandbox: codex.SandboxDangerFullAccess, Approval: codex.ApprovalNever}
	case ModeCustom:
		p = Policy{Sandbox: firstNonEmpty(user.SandboxMode, codex.SandboxReadOnly),
			Approval: firstNonEmpty(user.ApprovalPolicy, codex.ApprovalOnRequest), Granular: user.GranularApproval}
	default:
		m = ModeAsk
		p = Policy{Sandbox: codex.SandboxReadOnly, Approval: codex.ApprovalOnRequest}
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
func customTools(p Policy) Mode {
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

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
