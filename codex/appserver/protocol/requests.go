package protocol

import "encoding/json"

// The requests codexacp sends, by family.
const (
	Initialize Request[InitializeParams, InitializeResponse] = "initialize"

	ThreadStart        Request[ThreadStartParams, ThreadStartResponse]               = "thread/start"
	ThreadResume       Request[ThreadResumeParams, ThreadResumeResponse]             = "thread/resume"
	ThreadFork         Request[ThreadForkParams, ThreadForkResponse]                 = "thread/fork"
	ThreadDelete       Request[ThreadDeleteParams, ThreadDeleteResponse]             = "thread/delete"
	ThreadNameSet      Request[ThreadSetNameParams, ThreadSetNameResponse]           = "thread/name/set"
	ThreadCompactStart Request[ThreadCompactStartParams, ThreadCompactStartResponse] = "thread/compact/start"
	ThreadGoalGet      Request[ThreadGoalGetParams, ThreadGoalGetResponse]           = "thread/goal/get"
	ThreadGoalSet      Request[ThreadGoalSetParams, ThreadGoalSetResponse]           = "thread/goal/set"
	ThreadGoalClear    Request[ThreadGoalClearParams, ThreadGoalClearResponse]       = "thread/goal/clear"

	TurnStart     Request[TurnStartParams, TurnStartResponse]         = "turn/start"
	TurnSteer     Request[TurnSteerParams, TurnSteerResponse]         = "turn/steer"
	TurnInterrupt Request[TurnInterruptParams, TurnInterruptResponse] = "turn/interrupt"
	ReviewStart   Request[ReviewStartParams, ReviewStartResponse]     = "review/start"

	McpServerStatusList Request[ListMcpServerStatusParams, ListMcpServerStatusResponse] = "mcpServerStatus/list"
	SkillsList          Request[SkillsListParams, SkillsListResponse]                   = "skills/list"
	ConfigRead          Request[ConfigReadParams, ConfigReadResponse]                   = "config/read"
	ModelList           Request[ModelListParams, ModelListResponse]                     = "model/list"

	AccountLoginStart Request[LoginAccountParams, LoginAccountResponse] = "account/login/start"
	AccountRead       Request[GetAccountParams, GetAccountResponse]     = "account/read"
)

// InitializeParams open the connection. Plan mode (turn/start's
// collaborationMode) and codex's questions (item/tool/requestUserInput)
// need Capabilities.ExperimentalAPI.
type InitializeParams struct {
	Capabilities *InitializeCapabilities `json:"capabilities,omitempty"`
	ClientInfo   ClientInfo              `json:"clientInfo"`
}

// ClientInfo names the client.
type ClientInfo struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// InitializeCapabilities are what the client opts into.
type InitializeCapabilities struct {
	ExperimentalAPI bool `json:"experimentalApi"`
}

// InitializeResponse is the server's answer to Initialize.
type InitializeResponse struct {
	UserAgent string `json:"userAgent"`
}

// ThreadOptions are the settings thread/start, thread/resume and
// thread/fork share: the thread's working directory, sandbox mode and
// approval policy, the configuration a `codex exec` gets as -c overrides
// (codexacp's tool server, the editor's MCP servers, the model catalog),
// and instructions.
type ThreadOptions struct {
	ApprovalPolicy        AskForApproval  `json:"approvalPolicy,omitzero"`
	Config                ConfigOverrides `json:"config,omitempty"`
	Cwd                   string          `json:"cwd,omitempty"`
	DeveloperInstructions string          `json:"developerInstructions,omitempty"`
	Model                 string          `json:"model,omitempty"`
	Sandbox               string          `json:"sandbox,omitempty"` // a sandbox mode: codex.SandboxReadOnly, …
	ServiceTier           string          `json:"serviceTier,omitempty"`
}

// ThreadStartParams start a thread.
type ThreadStartParams struct {
	ThreadOptions
}

// ThreadResumeParams load a thread from its rollout into the server;
// ExcludeTurns leaves its turns out of the answer.
type ThreadResumeParams struct {
	ThreadOptions
	ExcludeTurns bool   `json:"excludeTurns,omitempty"`
	ThreadID     string `json:"threadId"`
}

// MarshalJSON sends the fields in the order of their names (see
// ThreadForkParams).
func (p ThreadResumeParams) MarshalJSON() ([]byte, error) {
	type fields ThreadResumeParams
	b, err := json.Marshal(fields(p))
	if err != nil {
		return nil, err
	}
	var byName map[string]json.RawMessage
	if err := json.Unmarshal(b, &byName); err != nil {
		return nil, err
	}
	return json.Marshal(byName)
}

// ThreadForkParams copy a thread's history into a new thread;
// ExcludeTurns leaves its turns out of the answer.
type ThreadForkParams struct {
	ThreadOptions
	ExcludeTurns bool   `json:"excludeTurns,omitempty"`
	ThreadID     string `json:"threadId"`
}

// MarshalJSON sends the fields in the order of their names, as for the
// other params (ExcludeTurns falls among ThreadOptions').
func (p ThreadForkParams) MarshalJSON() ([]byte, error) {
	type fields ThreadForkParams
	b, err := json.Marshal(fields(p))
	if err != nil {
		return nil, err
	}
	var byName map[string]json.RawMessage
	if err := json.Unmarshal(b, &byName); err != nil {
		return nil, err
	}
	return json.Marshal(byName) // a map's keys are encoded in order
}

// ThreadSettings are what the server answers thread/start, thread/resume
// and thread/fork with besides the thread: the model and settings it
// applies.
type ThreadSettings struct {
	Model           string `json:"model,omitempty"`
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	ServiceTier     string `json:"serviceTier,omitempty"`
}

// ThreadStartResponse is the answer to thread/start.
type ThreadStartResponse struct {
	Thread Thread `json:"thread"`
	ThreadSettings
}

// ThreadResumeResponse is the answer to thread/resume, with the thread's
// collaboration mode (plan mode is kept across turns).
type ThreadResumeResponse struct {
	Thread Thread `json:"thread"`
	ThreadSettings
	CollaborationMode *CollaborationMode `json:"collaborationMode,omitempty"`
}

// ThreadForkResponse is the answer to thread/fork: the new thread.
type ThreadForkResponse struct {
	Thread Thread `json:"thread"`
	ThreadSettings
}

// Thread is a thread as the server describes it.
type Thread struct {
	ID             string `json:"id"`
	Cwd            string `json:"cwd,omitempty"`
	Name           string `json:"name,omitempty"`
	ParentThreadID string `json:"parentThreadId,omitempty"`
}

// ThreadDeleteParams delete a thread and its rollout.
type ThreadDeleteParams struct {
	ThreadID string `json:"threadId"`
}

// ThreadDeleteResponse is the (empty) answer to thread/delete.
type ThreadDeleteResponse struct{}

// ThreadSetNameParams name a thread.
type ThreadSetNameParams struct {
	Name     string `json:"name"`
	ThreadID string `json:"threadId"`
}

// ThreadSetNameResponse is the (empty) answer to thread/name/set.
type ThreadSetNameResponse struct{}

// ThreadCompactStartParams compact a thread's history: a turn of its own,
// whose id comes with turn/started.
type ThreadCompactStartParams struct {
	ThreadID string `json:"threadId"`
}

// ThreadCompactStartResponse is the (empty) answer to thread/compact/start.
type ThreadCompactStartResponse struct{}

// ThreadGoal is a thread's goal.
type ThreadGoal struct {
	ThreadID        string `json:"threadId,omitempty"`
	Objective       string `json:"objective"`
	Status          string `json:"status"` // GoalActive, …
	TokenBudget     *int64 `json:"tokenBudget"`
	TokensUsed      int64  `json:"tokensUsed"`
	TimeUsedSeconds int64  `json:"timeUsedSeconds"`
	CreatedAt       int64  `json:"createdAt,omitempty"`
	UpdatedAt       int64  `json:"updatedAt,omitempty"`
}

// ThreadGoal statuses and the origins of a change.
const (
	GoalActive   = "active"
	GoalPaused   = "paused"
	GoalComplete = "complete"

	GoalOriginUser = "user"
)

// ThreadGoalGetParams ask for a thread's goal.
type ThreadGoalGetParams struct {
	ThreadID string `json:"threadId"`
}

// ThreadGoalGetResponse holds the goal; nil: none is set.
type ThreadGoalGetResponse struct {
	Goal *ThreadGoal `json:"goal"`
}

// ThreadGoalSetParams set (or change) a thread's goal.
type ThreadGoalSetParams struct {
	Objective   string `json:"objective,omitempty"`
	Origin      string `json:"origin,omitempty"`
	Status      string `json:"status,omitempty"`
	ThreadID    string `json:"threadId"`
	TokenBudget *int64 `json:"tokenBudget,omitempty"`
}

// ThreadGoalSetResponse holds the goal as set.
type ThreadGoalSetResponse struct {
	Goal *ThreadGoal `json:"goal"`
}

// ThreadGoalClearParams clear a thread's goal.
type ThreadGoalClearParams struct {
	Origin   string `json:"origin,omitempty"`
	ThreadID string `json:"threadId"`
}

// ThreadGoalClearResponse is the answer to thread/goal/clear.
type ThreadGoalClearResponse struct {
	Cleared bool `json:"cleared,omitempty"`
}

// TurnStartParams start a turn on a thread. Each turn states the sandbox
// and approval policy in full: a turn's stay the thread's until another
// turn changes them.
type TurnStartParams struct {
	ApprovalPolicy    AskForApproval     `json:"approvalPolicy,omitzero"`
	CollaborationMode *CollaborationMode `json:"collaborationMode,omitempty"`
	Cwd               string             `json:"cwd,omitempty"`
	Effort            string             `json:"effort,omitempty"`
	Input             []UserInput        `json:"input"`
	Model             string             `json:"model,omitempty"`
	SandboxPolicy     *SandboxPolicy     `json:"sandboxPolicy,omitempty"`
	// ServiceTier is kept by the thread across turns until a turn sends
	// null (Null).
	ServiceTier Nullable[string] `json:"serviceTier,omitzero"`
	ThreadID    string           `json:"threadId"`
}

// CollaborationMode is a turn's mode (ModePlan, ModeDefault), with the
// model and effort it carries: it takes precedence over the turn's.
type CollaborationMode struct {
	Mode     string                     `json:"mode"`
	Settings *CollaborationModeSettings `json:"settings,omitempty"`
}

// Collaboration modes.
const (
	ModePlan    = "plan"
	ModeDefault = "default"
)

// CollaborationModeSettings are the mode's model, effort and instructions
// (nil DeveloperInstructions, sent as null: codex's built-in ones).
type CollaborationModeSettings struct {
	DeveloperInstructions *string `json:"developer_instructions"`
	Model                 string  `json:"model"`
	ReasoningEffort       string  `json:"reasoning_effort,omitempty"`
}

// TurnStartResponse is the answer to turn/start: the turn, by its id.
type TurnStartResponse struct {
	Turn Turn `json:"turn"`
}

// Turn is a turn as the server describes it.
type Turn struct {
	ID     string `json:"id"`
	Status string `json:"status,omitempty"` // inProgress, completed, failed, interrupted
	// Error is why a failed turn failed (codex's TurnError), for package
	// events to read.
	Error json.RawMessage `json:"error,omitempty"`
}

// TurnSteerParams add the user's input to the thread's running turn,
// which must be ExpectedTurnID.
type TurnSteerParams struct {
	ExpectedTurnID string      `json:"expectedTurnId"`
	Input          []UserInput `json:"input"`
	ThreadID       string      `json:"threadId"`
}

// TurnSteerResponse is the answer to turn/steer.
type TurnSteerResponse struct {
	TurnID string `json:"turnId,omitempty"`
}

// TurnInterruptParams interrupt a thread's turn.
type TurnInterruptParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
}

// TurnInterruptResponse is the (empty) answer to turn/interrupt.
type TurnInterruptResponse struct{}

// ReviewStartParams start a review turn on a thread.
type ReviewStartParams struct {
	Delivery string       `json:"delivery,omitempty"` // ReviewInline
	Target   ReviewTarget `json:"target"`
	ThreadID string       `json:"threadId"`
}

// ReviewInline delivers the review on the thread itself.
const ReviewInline = "inline"

// ReviewTarget is what a review reviews, by Type.
type ReviewTarget struct {
	Branch       string `json:"branch,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	SHA          string `json:"sha,omitempty"`
	Type         string `json:"type"` // ReviewUncommittedChanges, …
}

// ReviewTarget types.
const (
	ReviewUncommittedChanges = "uncommittedChanges"
	ReviewBaseBranch         = "baseBranch"
	ReviewCommit             = "commit"
	ReviewCustom             = "custom"
)

// ReviewStartResponse is the answer to review/start: the review's turn.
type ReviewStartResponse struct {
	Turn           Turn   `json:"turn"`
	ReviewThreadID string `json:"reviewThreadId,omitempty"`
}

// ListMcpServerStatusParams list the MCP servers of a thread.
type ListMcpServerStatusParams struct {
	Detail   string `json:"detail,omitempty"` // McpStatusToolsAndAuthOnly, "full"
	ThreadID string `json:"threadId,omitempty"`
}

// McpStatusToolsAndAuthOnly leaves resources out of the answer.
const McpStatusToolsAndAuthOnly = "toolsAndAuthOnly"

// ListMcpServerStatusResponse lists the MCP servers.
type ListMcpServerStatusResponse struct {
	Data       []McpServerStatus `json:"data"`
	NextCursor *string           `json:"nextCursor,omitempty"`
}

// McpServerStatus is one MCP server as /mcp shows it.
type McpServerStatus struct {
	Name          string                     `json:"name"`
	RuntimeStatus string                     `json:"runtimeStatus,omitempty"`
	AuthStatus    string                     `json:"authStatus"`
	Tools         map[string]json.RawMessage `json:"tools"`
	ToolsError    *string                    `json:"toolsError,omitempty"`
}

// SkillsListParams list the skills codex has for each of Cwds.
type SkillsListParams struct {
	Cwds        []string `json:"cwds,omitempty"`
	ForceReload bool     `json:"forceReload,omitempty"`
}

// SkillsListResponse lists the skills per directory.
type SkillsListResponse struct {
	Data []SkillsListEntry `json:"data"`
}

// SkillsListEntry is the skills of one directory.
type SkillsListEntry struct {
	Cwd    string          `json:"cwd"`
	Skills []SkillMetadata `json:"skills"`
}

// SkillMetadata is one skill.
type SkillMetadata struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Path        string `json:"path"`  // its SKILL.md
	Scope       string `json:"scope"` // repo, user, system or admin
	Enabled     bool   `json:"enabled"`
}

// ConfigReadParams ask for the configuration codex applies in Cwd (none:
// outside any project).
type ConfigReadParams struct {
	Cwd           string `json:"cwd,omitempty"`
	IncludeLayers bool   `json:"includeLayers"`
}

// ConfigReadResponse holds codex's effective configuration. Config stays
// JSON: codex.ParseConfigRead reads the settings codexacp uses from it.
type ConfigReadResponse struct {
	Config json.RawMessage `json:"config"`
}

// ModelListParams list the models codex offers.
type ModelListParams struct {
	Cursor        string `json:"cursor,omitempty"`
	IncludeHidden bool   `json:"includeHidden,omitempty"`
}

// ModelListResponse lists models.
type ModelListResponse struct {
	Data       []Model `json:"data"`
	NextCursor *string `json:"nextCursor,omitempty"`
}

// Model is one model as model/list describes it.
type Model struct {
	ID                     string `json:"id"`
	Model                  string `json:"model"`
	DisplayName            string `json:"displayName"`
	Description            string `json:"description"`
	Hidden                 bool   `json:"hidden"`
	IsDefault              bool   `json:"isDefault"`
	DefaultReasoningEffort string `json:"defaultReasoningEffort"`
}

// LoginAccountParams log codex in, by Type: LoginAPIKey with APIKey (codex
// saves it in its home, as `codex login --with-api-key` does).
type LoginAccountParams struct {
	APIKey string `json:"apiKey,omitempty"`
	Type   string `json:"type"`
}

// Account and login types.
const (
	LoginAPIKey  = "apiKey"
	LoginChatGPT = "chatgpt"
)

// LoginAccountResponse is the answer to account/login/start.
type LoginAccountResponse struct {
	Type string `json:"type"`
}

// GetAccountParams ask for codex's account.
type GetAccountParams struct {
	RefreshToken bool `json:"refreshToken,omitempty"`
}

// GetAccountResponse holds codex's account; nil: not logged in.
type GetAccountResponse struct {
	Account            *Account `json:"account"`
	RequiresOpenaiAuth bool     `json:"requiresOpenaiAuth"`
}

// Account is how codex is logged in, by Type (LoginAPIKey, LoginChatGPT…).
type Account struct {
	Type  string `json:"type"`
	Email string `json:"email,omitempty"`
}
