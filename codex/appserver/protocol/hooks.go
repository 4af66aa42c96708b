package protocol

import "encoding/json"

// Codex's hooks: commands (or MCP tools, prompts, agents) codex runs on
// events of a turn. A hook of a project or the user runs only once trusted:
// its current hash is recorded as hooks.state."<key>".trusted_hash in the
// user's config.toml (written with ConfigBatchWrite); a hook changed since
// is "modified" until trusted again.
const (
	HooksList        Request[HooksListParams, HooksListResponse]          = "hooks/list"
	ConfigBatchWrite Request[ConfigBatchWriteParams, ConfigWriteResponse] = "config/batchWrite"
)

// HooksListParams list the hooks that apply in each of Cwds (none: the
// server's cwd), or in a loaded thread (ThreadID, without Cwds).
type HooksListParams struct {
	Cwds     []string `json:"cwds,omitempty"`
	ThreadID string   `json:"threadId,omitempty"`
}

// HooksListResponse lists the hooks per directory.
type HooksListResponse struct {
	Data []HooksListEntry `json:"data"`
}

// HooksListEntry is the hooks of one directory, and what codex could not
// read of them.
type HooksListEntry struct {
	Cwd      string          `json:"cwd"`
	Hooks    []HookMetadata  `json:"hooks"`
	Warnings []string        `json:"warnings"`
	Errors   []HookErrorInfo `json:"errors"`
}

// HookErrorInfo is a hooks file codex could not read.
type HookErrorInfo struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// HookMetadata is one hook. Its handler is flattened into it: HandlerType
// (HookCommand: Command; HookMCPTool: Server and Tool; "prompt", "agent").
type HookMetadata struct {
	Key           string  `json:"key"`
	EventName     string  `json:"eventName"` // preToolUse, postToolUse, sessionStart, stop, …
	HandlerType   string  `json:"handlerType"`
	Command       string  `json:"command,omitempty"`
	Async         bool    `json:"async,omitempty"`
	Server        string  `json:"server,omitempty"`
	Tool          string  `json:"tool,omitempty"`
	Matcher       *string `json:"matcher,omitempty"`
	TimeoutSec    int64   `json:"timeoutSec"`
	StatusMessage *string `json:"statusMessage,omitempty"`
	SourcePath    string  `json:"sourcePath"`
	Source        string  `json:"source"` // project, user, plugin, system, …
	PluginID      *string `json:"pluginId,omitempty"`
	Enabled       bool    `json:"enabled"`
	IsManaged     bool    `json:"isManaged"`
	CurrentHash   string  `json:"currentHash"`
	TrustStatus   string  `json:"trustStatus"` // HookTrusted, …
}

// Hook handler types and trust statuses.
const (
	HookCommand = "command"
	HookMCPTool = "mcpTool"

	HookManaged   = "managed"
	HookUntrusted = "untrusted"
	HookTrusted   = "trusted"
	HookModified  = "modified"
)

// ConfigBatchWriteParams write Edits to the user's config.toml (FilePath:
// another file); ReloadUserConfig applies them to the loaded threads.
type ConfigBatchWriteParams struct {
	Edits            []ConfigEdit `json:"edits"`
	ExpectedVersion  string       `json:"expectedVersion,omitempty"`
	FilePath         string       `json:"filePath,omitempty"`
	ReloadUserConfig bool         `json:"reloadUserConfig,omitempty"`
}

// ConfigEdit sets the value at KeyPath (dotted TOML keys): MergeUpsert
// merges a table into the one there, MergeReplace replaces it.
type ConfigEdit struct {
	KeyPath       string `json:"keyPath"`
	MergeStrategy string `json:"mergeStrategy"`
	Value         any    `json:"value"`
}

// Merge strategies of a ConfigEdit.
const (
	MergeUpsert  = "upsert"
	MergeReplace = "replace"
)

// ConfigWriteResponse is the file written and its new version; Status is
// "okOverridden" when a layer above the user's overrides the value, which
// Overridden explains.
type ConfigWriteResponse struct {
	FilePath   string          `json:"filePath"`
	Status     string          `json:"status"`
	Version    string          `json:"version"`
	Overridden json.RawMessage `json:"overriddenMetadata,omitempty"`
}
