package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/codexacp/codexacp/internal/lazyregexp"
	"github.com/codexacp/codexacp/internal/regularfile"
)

// Sandbox modes codex accepts (`codex exec -s`, the config's sandbox_mode,
// app-server thread/start's sandbox).
const (
	SandboxReadOnly         = "read-only"
	SandboxWorkspaceWrite   = "workspace-write"
	SandboxDangerFullAccess = "danger-full-access"
)

// Approval policies codex accepts (app-server AskForApproval; the
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
	// Model and ReasoningEffort are the model and effort codex's turns use
	// when codexacp names none (config.toml's, a profile's or a -c
	// override's): the pickers' and /status's current values.
	Model, ReasoningEffort string
}

// WorkspaceWrite is the [sandbox_workspace_write] table: what codex's
// workspace-write sandbox allows beyond the workspace.
type WorkspaceWrite struct {
	WritableRoots       []string `json:"writable_roots"`
	NetworkAccess       bool     `json:"network_access"`
	ExcludeTmpdirEnvVar bool     `json:"exclude_tmpdir_env_var"`
	ExcludeSlashTmp     bool     `json:"exclude_slash_tmp"`
}

// Configured reports whether the user set any of the sandbox and approval
// settings.
func (c UserConfig) Configured() bool {
	return c.ApprovalPolicy != "" || c.SandboxMode != "" || c.WorkspaceWrite != nil
}

// UserConfigUnset reports whether no configuration codex reads can hold
// the settings UserConfig holds, so that asking codex (a codex start:
// docs/benchmarks.md) can be skipped: env is codex's environment (nil: this process's),
// overrides the user's -c. Only a definite "nothing mentions them" is true
// (userConfigUnset), and only on Linux, whose configuration layers are all
// files.
func UserConfigUnset(env, overrides []string) bool {
	if env == nil {
		env = os.Environ()
	}
	return runtime.GOOS == "linux" && userConfigUnset(codexHome(env), systemConfigDir, overrides)
}

// ProjectUserConfig is appserver.ConfigServer.ProjectUserConfig with read
// asking codex (appserver.ReadUserConfig on some app-server); env is codex's environment
// (nil: this process's), which says where the user's own config.toml is.
func ProjectUserConfig(ctx context.Context, env []string, cwd string, read func(ctx context.Context, cwd string) (UserConfig, error)) (uc UserConfig, ok bool, err error) {
	if env == nil {
		env = os.Environ()
	}
	if !projectConfigMayApply(cwd, codexHome(env), "") {
		return UserConfig{}, false, nil
	}
	uc, err = read(ctx, cwd)
	return uc, err == nil, err
}

// projectConfigMayApply reports whether a .codex/config.toml in cwd or a
// directory above it, up to top ("": the root; tests keep to their own
// directory with it), the user's own in home aside, may set what
// UserConfig holds; a file that cannot be read may.
func projectConfigMayApply(cwd, home, top string) bool {
	if top != "" {
		top = filepath.Clean(top)
	}
	for dir := filepath.Clean(cwd); ; {
		layer := filepath.Join(dir, ".codex")
		if layer != home && fileMayMention(filepath.Join(layer, "config.toml"), mentionsSettings) {
			return true
		}
		parent := filepath.Dir(dir)
		if dir == top || parent == dir {
			return false
		}
		dir = parent
	}
}

// configSettings are the keys of codex's Config (config/read's "config")
// that UserConfig holds; unset keys are null. The fields are in the
// order of their names.
type configSettings struct {
	ApprovalPolicy json.RawMessage `json:"approval_policy"` // a policy's name, or {"granular": {...}}
	Model          *string         `json:"model"`
	Effort         *string         `json:"model_reasoning_effort"`
	SandboxMode    *string         `json:"sandbox_mode"`
	WorkspaceWrite *WorkspaceWrite `json:"sandbox_workspace_write"`
}

// ParseConfigRead reads the settings UserConfig holds from a config/read
// result ({"config": {...}}).
func ParseConfigRead(raw json.RawMessage) (UserConfig, error) {
	var res struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return UserConfig{}, fmt.Errorf("codex config/read: %w", err)
	}
	return ParseConfig(res.Config)
}

// ParseConfig reads the settings UserConfig holds from codex's Config, the
// "config" of a config/read result: unset keys are null there.
func ParseConfig(config json.RawMessage) (UserConfig, error) {
	var cfg configSettings
	if len(config) > 0 {
		if err := json.Unmarshal(config, &cfg); err != nil {
			return UserConfig{}, fmt.Errorf("codex config/read: %w", err)
		}
	}
	c := UserConfig{WorkspaceWrite: cfg.WorkspaceWrite}
	if cfg.Model != nil {
		c.Model = *cfg.Model
	}
	if cfg.Effort != nil {
		c.ReasoningEffort = *cfg.Effort
	}
	if cfg.SandboxMode != nil {
		switch m := *cfg.SandboxMode; m {
		case SandboxReadOnly, SandboxWorkspaceWrite, SandboxDangerFullAccess:
			c.SandboxMode = m
		default:
			return UserConfig{}, fmt.Errorf("codex config/read: unknown sandbox_mode %q", m)
		}
	}
	switch ap := cfg.ApprovalPolicy; {
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

// ConfigRead is c as a config/read result holds it, unset keys null:
// ParseConfigRead(c.ConfigRead()) is c. A transcript records the user's
// settings this way, and a replay's fake codex answers config/read with
// them.
func (c UserConfig) ConfigRead() json.RawMessage {
	orNil := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	cfg := configSettings{
		Model:          orNil(c.Model),
		Effort:         orNil(c.ReasoningEffort),
		SandboxMode:    orNil(c.SandboxMode),
		WorkspaceWrite: c.WorkspaceWrite,
	}
	switch {
	case c.ApprovalPolicy == ApprovalGranular:
		cfg.ApprovalPolicy = c.GranularApproval
	case c.ApprovalPolicy != "":
		cfg.ApprovalPolicy, _ = json.Marshal(c.ApprovalPolicy)
	}
	if len(cfg.ApprovalPolicy) == 0 {
		cfg.ApprovalPolicy = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		Config configSettings `json:"config"`
	}{cfg})
	return b
}

// userConfigKeys are the sandbox and approval settings UserConfig holds, as
// config.toml and -c overrides name them (a table header, a dotted key or
// an inline table all spell the name out).
var userConfigKeys = []string{"approval_policy", "sandbox_mode", "sandbox_workspace_write"}

// modelKey matches a line of a TOML file setting model or
// model_reasoning_effort, at the top level, in a table ([profiles.p]) or as
// a dotted key (profiles.p.model = …). The -c overrides of these need no
// check: codexacp reads them itself (ConfiguredModel, ConfiguredValue).
var modelKey = lazyregexp.New(`(?m)^[ \t]*(?:[A-Za-z0-9_".-]+\.)?"?(?:model|model_reasoning_effort)"?[ \t]*=`)

// systemConfigDir holds codex's system-wide layers on Linux (config.toml,
// managed_config.toml, requirements.toml).
const systemConfigDir = "/etc/codex"

// userConfigUnset reports whether none of the settings UserConfig holds can
// be set: no -c override names a sandbox or approval setting or a profile,
// and neither home's config.toml nor any file in sysDir mentions one or
// sets a model, an effort or a profile. Only a definite "nothing mentions them" is
// true: a file that cannot be read (other than a missing one) makes it
// false, and codex is asked. It is a textual check of the layers codex
// reads on Linux (docs/codex.md#pinned-codex-facts); macOS's managed
// preferences have no file to check, hence Linux only.
func userConfigUnset(home, sysDir string, overrides []string) bool {
	if home == "" {
		return false
	}
	for _, kv := range overrides {
		key, _, _ := strings.Cut(kv, "=")
		if mentionsUserConfig(key) || strings.TrimSpace(key) == "profile" {
			return false
		}
	}
	return !configFilesMayMention(home, sysDir, mentionsSettings)
}

// configFilesMayMention reports whether a configuration file codex
// reads on Linux — home's config.toml (when home is known) and every file
// in sysDir — may say what mentions looks for (fileMayMention); a sysDir
// that exists but cannot be listed may too.
func configFilesMayMention(home, sysDir string, mentions func([]byte) bool) bool {
	var files []string
	if home != "" {
		files = append(files, filepath.Join(home, "config.toml"))
	}
	entries, err := os.ReadDir(sysDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true
	}
	for _, e := range entries {
		files = append(files, filepath.Join(sysDir, e.Name()))
	}
	return slices.ContainsFunc(files, func(f string) bool { return fileMayMention(f, mentions) })
}

// configFileMax bounds a codex configuration file codexacp reads itself
// (config.toml, the system's): they hold a few KiB of settings. One larger
// is not read; codex is asked instead.
const configFileMax = 4 << 20

// fileMayMention reports whether the file at path may say what mentions
// looks for: it does, or it exists but cannot be read (what it says is not
// known). A missing file, or a path through a non-directory, says nothing.
func fileMayMention(path string, mentions func([]byte) bool) bool {
	// A FIFO or device is not waited on or read: what it says is unknown.
	b, err := regularfile.ReadFile(path, configFileMax, regularfile.FollowLink)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return false
	case err != nil:
		return true
	}
	return mentions(b)
}

// mentionsSettings reports whether a configuration file may set what
// UserConfig holds, or select a profile (codex refuses a legacy
// `profile = …`: asking it makes the reason known at start).
func mentionsSettings(b []byte) bool {
	return mentionsUserConfig(string(b)) || modelKey.Match(b) || profileKey.Match(b)
}

// profileKey matches a line selecting a profile (`profile = "x"`).
var profileKey = lazyregexp.New(`(?m)^[ \t]*"?profile"?[ \t]*=`)

func mentionsUserConfig(s string) bool {
	for _, k := range userConfigKeys {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// codexHome is the CODEX_HOME codex sees with env (the last entry of a
// name wins, as in os/exec): the variable, else ~/.codex; "" when neither
// is known.
func codexHome(env []string) string {
	var codexHome, home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CODEX_HOME="); ok {
			codexHome = v
		} else if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	switch {
	case codexHome != "":
		return codexHome
	case home != "":
		return filepath.Join(home, ".codex")
	}
	return ""
}
