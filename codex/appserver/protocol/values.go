package protocol

import (
	"bytes"
	"encoding/json"
)

// Nullable is a field that codexacp may leave out (the zero Nullable, with
// `omitzero`), send as null (Null) or send with a value (Some): turn/start's
// serviceTier is kept by codex across turns until a turn sends null.
type Nullable[T any] struct {
	Value T
	Valid bool // Value is sent
	Null  bool // null is sent (Valid is false)
}

// Some is a Nullable holding v.
func Some[T any](v T) Nullable[T] { return Nullable[T]{Value: v, Valid: true} }

// Null is a Nullable sent as null.
func Null[T any]() Nullable[T] { return Nullable[T]{Null: true} }

// IsZero reports whether n is left out (for `omitzero`).
func (n Nullable[T]) IsZero() bool { return !n.Valid && !n.Null }

func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if !n.Valid {
		return []byte("null"), nil
	}
	return json.Marshal(n.Value)
}

func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*n = Null[T]()
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Some(v)
	return nil
}

// AskForApproval is an approval policy (codex's AskForApproval): one of
// the named policies (codex.ApprovalUntrusted, ApprovalOnRequest,
// ApprovalNever), or the table form, kept as the JSON object codex reads
// ({"granular": {...}}).
type AskForApproval struct {
	Policy   string          // a named policy; "" when Granular is set
	Granular json.RawMessage // the whole {"granular": {...}} object
}

// IsZero reports whether no policy is set (for `omitzero`).
func (a AskForApproval) IsZero() bool { return a.Policy == "" && len(a.Granular) == 0 }

func (a AskForApproval) MarshalJSON() ([]byte, error) {
	if len(a.Granular) > 0 {
		return a.Granular, nil
	}
	return json.Marshal(a.Policy)
}

func (a *AskForApproval) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		*a = AskForApproval{Granular: append(json.RawMessage(nil), b...)}
		return nil
	}
	*a = AskForApproval{}
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	return json.Unmarshal(b, &a.Policy)
}

// SandboxPolicy is a turn's sandbox (codex's SandboxPolicy), by Type.
type SandboxPolicy struct {
	ExcludeSlashTmp     bool   `json:"excludeSlashTmp,omitempty"`
	ExcludeTmpdirEnvVar bool   `json:"excludeTmpdirEnvVar,omitempty"`
	NetworkAccess       bool   `json:"networkAccess,omitempty"`
	Type                string `json:"type"` // SandboxReadOnly, SandboxWorkspaceWrite, SandboxDangerFullAccess
	// WritableRoots are workspaceWrite's roots beyond the cwd; an empty
	// (non-nil) list is sent as [].
	WritableRoots []string `json:"writableRoots,omitzero"`
}

// SandboxPolicy types.
const (
	SandboxReadOnly         = "readOnly"
	SandboxWorkspaceWrite   = "workspaceWrite"
	SandboxDangerFullAccess = "dangerFullAccess"
)

// UserInput is one item of a prompt (codex's UserInput), by Type: Text,
// an Image by URL (a data URL), a LocalImage by Path, a Skill by Name and
// Path (its SKILL.md).
type UserInput struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	URL  string `json:"url,omitempty"`
	Path string `json:"path,omitempty"`
	Name string `json:"name,omitempty"`
}

// UserInput types.
const (
	InputText       = "text"
	InputImage      = "image"
	InputLocalImage = "localImage"
	InputSkill      = "skill"
)

// MarshalJSON sends the fields of the input's type, each whatever its
// value (a text input's text even when empty).
func (in UserInput) MarshalJSON() ([]byte, error) {
	switch in.Type {
	case InputText:
		return json.Marshal(struct {
			Text string `json:"text"`
			Type string `json:"type"`
		}{in.Text, in.Type})
	case InputImage:
		return json.Marshal(struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		}{in.Type, in.URL})
	case InputLocalImage:
		return json.Marshal(struct {
			Path string `json:"path"`
			Type string `json:"type"`
		}{in.Path, in.Type})
	case InputSkill:
		return json.Marshal(struct {
			Name string `json:"name"`
			Path string `json:"path"`
			Type string `json:"type"`
		}{in.Name, in.Path, in.Type})
	}
	type plain UserInput
	return json.Marshal(plain(in))
}

// ConfigOverrides are per-thread configuration values by dotted key, as
// codex's -c takes them ("mcp_servers.acp" → an MCPServerConfig,
// "model_catalog_json" → a path, "shell_environment_policy.set.K" → a
// value): codex's Config is open-ended, so this is the one map of the
// protocol.
type ConfigOverrides map[string]any

// MCPServerConfig is an MCP server as a thread's configuration names it
// (mcp_servers.NAME): a streamable HTTP server by URL, or a stdio one by
// Command.
type MCPServerConfig struct {
	// Args, Env and HTTPHeaders are sent when non-nil, even empty.
	Args                     []string          `json:"args,omitzero"`
	Command                  string            `json:"command,omitempty"`
	DefaultToolsApprovalMode string            `json:"default_tools_approval_mode,omitempty"`
	Env                      map[string]string `json:"env,omitzero"`
	HTTPHeaders              map[string]string `json:"http_headers,omitzero"`
	// Required fails the thread's start when the server cannot start.
	Required       bool   `json:"required,omitempty"`
	ToolTimeoutSec int    `json:"tool_timeout_sec,omitempty"`
	URL            string `json:"url,omitempty"`
}

// RateLimitSnapshot is one metered limit of the account (LimitID "codex",
// or a model's own) with its usage windows, as codex reads them from the
// x-codex-* headers of every model response.
type RateLimitSnapshot struct {
	LimitID     string           `json:"limitId,omitempty"`
	LimitName   string           `json:"limitName,omitempty"`
	Primary     *RateLimitWindow `json:"primary,omitempty"`   // the short window (5 h)
	Secondary   *RateLimitWindow `json:"secondary,omitempty"` // the long window (a week)
	Credits     *CreditsSnapshot `json:"credits,omitempty"`
	PlanType    string           `json:"planType,omitempty"`
	ReachedType string           `json:"rateLimitReachedType,omitempty"` // rate_limit_reached, workspace_…_credits_depleted, …
}

// Empty reports whether the snapshot says nothing: codex sends one with
// every field null after a response without rate-limit headers.
func (l *RateLimitSnapshot) Empty() bool {
	return l == nil || l.Primary == nil && l.Secondary == nil && l.Credits == nil && l.ReachedType == ""
}

// RateLimitWindow is how much of one usage window is used.
type RateLimitWindow struct {
	UsedPercent   int    `json:"usedPercent"`
	WindowMinutes *int64 `json:"windowDurationMins,omitempty"`
	ResetsAt      *int64 `json:"resetsAt,omitempty"` // Unix seconds
}

// CreditsSnapshot is the account's credit balance.
type CreditsSnapshot struct {
	HasCredits bool   `json:"hasCredits"`
	Unlimited  bool   `json:"unlimited"`
	Balance    string `json:"balance,omitempty"`
}
