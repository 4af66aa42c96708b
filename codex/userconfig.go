package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
)

// Approval policies codex 0.169 accepts (app-server AskForApproval; the
// config's approval_policy). ApprovalGranular stands for the table form
// (`approval_policy = { granular = … }`), which codexacp never writes.
const (
	ApprovalUntrusted = "untrusted"
	ApprovalOnRequest = "on-request"
	ApprovalNever     = "never"
	ApprovalGranular  = "granular"
)

// UserConfig is what the user configured for codex's sandbox and approvals,
// as codex resolves it from config.toml in CODEX_HOME and the -c overrides
// codexacp passes on. Empty fields were not configured.
type UserConfig struct {
	ApprovalPolicy string          // Approval*; "" unset
	SandboxMode    string          // Sandbox*; "" unset
	WorkspaceWrite *WorkspaceWrite // [sandbox_workspace_write]; nil unset
	// GranularApproval is approval_policy's table form as codex reports it
	// ({"granular": {...}}), when ApprovalPolicy is ApprovalGranular.
	GranularApproval json.RawMessage
}

// WorkspaceWrite is the [sandbox_workspace_write] table: what codex's
// workspace-write sandbox allows beyond the workspace.
type WorkspaceWrite struct {
	WritableRoots       []string `json:"writable_roots"`
	NetworkAccess       bool     `json:"network_access"`
	ExcludeTmpdirEnvVar bool     `json:"exclude_tmpdir_env_var"`
	ExcludeSlashTmp     bool     `json:"exclude_slash_tmp"`
}

// Configured reports whether the user set any of the settings.
func (c UserConfig) Configured() bool {
	return c.ApprovalPolicy != "" || c.SandboxMode != "" || c.WorkspaceWrite != nil
}

// ReadUserConfig asks a running app-server for the user's configuration
// (`config/read`, codex 0.169): codex merges config.toml and the -c
// overrides the process was started with, so codexacp needs no TOML parser
// and sees exactly what codex would apply.
func ReadUserConfig(ctx context.Context, server *AppServer) (UserConfig, error) {
	var res json.RawMessage
	if err := server.Call(ctx, "config/read", map[string]any{"includeLayers": false}, &res); err != nil {
		return UserConfig{}, err
	}
	return ParseConfigRead(res)
}

// ConfigReadEnv is set (to "1") in the environment of the app-server
// ReadUserConfigOnce starts: codex ignores it; a stand-in codex (a replay's)
// tells by it the process that only answers config/read from the ones
// that run turns.
const ConfigReadEnv = "CODEXACP_CONFIG_READ"

// ReadUserConfigOnce starts an app-server with opts only to read the
// user's configuration, then ends it. Both backends use it at start-up, so
// that the app-server running turns serves turns alone.
func ReadUserConfigOnce(ctx context.Context, opts AppServerOptions) (UserConfig, error) {
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	opts.Env = append(slices.Clip(opts.Env), ConfigReadEnv+"=1")
	server, err := StartAppServer(ctx, opts)
	if err != nil {
		return UserConfig{}, err
	}
	defer server.Close()
	return ReadUserConfig(ctx, server)
}

// ParseConfigRead reads the settings UserConfig holds from a config/read
// result ({"config": {...}}): unset keys are null there.
func ParseConfigRead(raw json.RawMessage) (UserConfig, error) {
	var res struct {
		Config struct {
			ApprovalPolicy json.RawMessage `json:"approval_policy"`
			SandboxMode    *string         `json:"sandbox_mode"`
			WorkspaceWrite *WorkspaceWrite `json:"sandbox_workspace_write"`
		} `json:"config"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return UserConfig{}, fmt.Errorf("codex config/read: %w", err)
	}
	c := UserConfig{WorkspaceWrite: res.Config.WorkspaceWrite}
	if res.Config.SandboxMode != nil {
		switch m := *res.Config.SandboxMode; m {
		case SandboxReadOnly, SandboxWorkspaceWrite, SandboxDangerFullAccess:
			c.SandboxMode = m
		default:
			return UserConfig{}, fmt.Errorf("codex config/read: unknown sandbox_mode %q", m)
		}
	}
	switch ap := res.Config.ApprovalPolicy; {
	case len(ap) == 0 || string(ap) == "null":
	case ap[0] == '{':
		c.ApprovalPolicy, c.GranularApproval = ApprovalGranular, ap
	default:
		var s string
		if err := json.Unmarshal(ap, &s); err != nil {
			return UserConfig{}, fmt.Errorf("codex config/read: approval_policy: %w", err)
		}
		switch s {
		case ApprovalUntrusted, ApprovalOnRequest, ApprovalNever:
			c.ApprovalPolicy = s
		default:
			return UserConfig{}, fmt.Errorf("codex config/read: unknown approval_policy %q", s)
		}
	}
	return c, nil
}
