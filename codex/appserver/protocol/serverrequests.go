package protocol

import "encoding/json"

// The requests codex sends, which codexacp answers: approvals and
// questions for the user.
const (
	CommandExecutionRequestApproval ServerRequest[CommandExecutionRequestApprovalParams, CommandExecutionRequestApprovalResponse] = "item/commandExecution/requestApproval"
	FileChangeRequestApproval       ServerRequest[FileChangeRequestApprovalParams, FileChangeRequestApprovalResponse]             = "item/fileChange/requestApproval"
	PermissionsRequestApproval      ServerRequest[PermissionsRequestApprovalParams, PermissionsRequestApprovalResponse]           = "item/permissions/requestApproval"
	McpServerElicitationRequest     ServerRequest[McpServerElicitationRequestParams, McpServerElicitationRequestResponse]         = "mcpServer/elicitation/request"
	ToolRequestUserInput            ServerRequest[ToolRequestUserInputParams, ToolRequestUserInputResponse]                       = "item/tool/requestUserInput"
)

// JSON-RPC error codes codexacp answers a server request with.
const (
	CodeInvalidParams  = -32602
	CodeMethodNotFound = -32601
	CodeInternal       = -32603
)

// CommandExecutionRequestApprovalParams ask whether a command may run
// outside the sandbox.
type CommandExecutionRequestApprovalParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	ItemID   string `json:"itemId"`
	Command  string `json:"command,omitempty"`
	Cwd      string `json:"cwd,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Approval decisions (codex's CommandExecutionApprovalDecision and
// FileChangeApprovalDecision; codexacp sends none of the amendment forms).
const (
	DecisionAccept           = "accept"
	DecisionAcceptForSession = "acceptForSession"
	DecisionDecline          = "decline"
	DecisionCancel           = "cancel"
)

// CommandExecutionRequestApprovalResponse answers with a Decision*.
type CommandExecutionRequestApprovalResponse struct {
	Decision string `json:"decision"`
}

// FileChangeRequestApprovalParams ask whether codex's own patch may be
// applied (codexacp declines: edits go through its tools).
type FileChangeRequestApprovalParams struct {
	ThreadID  string `json:"threadId"`
	TurnID    string `json:"turnId"`
	ItemID    string `json:"itemId"`
	Reason    string `json:"reason,omitempty"`
	GrantRoot string `json:"grantRoot,omitempty"`
}

// FileChangeRequestApprovalResponse answers with a Decision*.
type FileChangeRequestApprovalResponse struct {
	Decision string `json:"decision"`
}

// PermissionsRequestApprovalParams ask for more permissions than the
// sandbox gives.
type PermissionsRequestApprovalParams struct {
	ThreadID    string          `json:"threadId"`
	TurnID      string          `json:"turnId"`
	ItemID      string          `json:"itemId"`
	Cwd         string          `json:"cwd,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	Permissions json.RawMessage `json:"permissions,omitempty"`
}

// PermissionsRequestApprovalResponse grants permissions: none, the zero
// GrantedPermissions.
type PermissionsRequestApprovalResponse struct {
	Permissions GrantedPermissions `json:"permissions"`
}

// GrantedPermissions are the permissions granted (codex's
// GrantedPermissionProfile).
type GrantedPermissions struct {
	FileSystem json.RawMessage `json:"fileSystem,omitempty"`
	Network    json.RawMessage `json:"network,omitempty"`
}

// McpServerElicitationRequestParams is an MCP server's question (Mode
// ElicitForm with RequestedSchema, or ElicitURL), or codex asking whether
// an MCP tool may run: a form without fields whose Meta.Kind is
// ApprovalKindMCPToolCall.
type McpServerElicitationRequestParams struct {
	ThreadID        string           `json:"threadId"`
	TurnID          string           `json:"turnId,omitempty"`
	ServerName      string           `json:"serverName"`
	Mode            string           `json:"mode"`
	Message         string           `json:"message"`
	RequestedSchema json.RawMessage  `json:"requestedSchema,omitempty"`
	URL             string           `json:"url,omitempty"`
	ElicitationID   string           `json:"elicitationId,omitempty"`
	Meta            *ElicitationMeta `json:"_meta,omitempty"`
}

// Elicitation modes codexacp puts to the user.
const (
	ElicitForm = "form"
	ElicitURL  = "url"
)

// ElicitationMeta is what codex says of its own elicitations.
type ElicitationMeta struct {
	Kind string `json:"codex_approval_kind,omitempty"` // ApprovalKindMCPToolCall
	// Persist is what codex can remember an approval for: a string or a
	// list of them ("session", "always").
	Persist    json.RawMessage `json:"persist,omitempty"`
	ToolName   string          `json:"tool_name,omitempty"`
	ToolParams json.RawMessage `json:"tool_params,omitempty"`
}

// ApprovalKindMCPToolCall marks codex's question whether an MCP tool may run.
const ApprovalKindMCPToolCall = "mcp_tool_call"

// McpServerElicitationRequestResponse answers an elicitation: Action
// (ElicitAccept, ElicitDecline, ElicitCancel), the form's Content when
// accepted, and for a tool approval Meta.Persist (PersistSession: codex
// remembers it for the thread).
type McpServerElicitationRequestResponse struct {
	Meta    *ElicitationResponseMeta `json:"_meta,omitempty"`
	Action  string                   `json:"action"`
	Content json.RawMessage          `json:"content,omitempty"`
}

// Elicitation actions, and what an approval is remembered for.
const (
	ElicitAccept   = "accept"
	ElicitDecline  = "decline"
	ElicitCancel   = "cancel"
	PersistSession = "session"
)

// ElicitationResponseMeta is the answer's _meta.
type ElicitationResponseMeta struct {
	Persist string `json:"persist,omitempty"`
}

// ToolRequestUserInputParams are codex's questions to the user (plan
// mode's request_user_input tool).
type ToolRequestUserInputParams struct {
	ThreadID   string                         `json:"threadId"`
	TurnID     string                         `json:"turnId"`
	ItemID     string                         `json:"itemId"`
	IsBlocking bool                           `json:"isBlocking,omitempty"`
	Questions  []ToolRequestUserInputQuestion `json:"questions"`
}

// ToolRequestUserInputQuestion is one question; IsOther: the user may
// answer in their own words; IsSecret: the answer is a secret.
type ToolRequestUserInputQuestion struct {
	ID       string                       `json:"id"`
	Header   string                       `json:"header"`
	Question string                       `json:"question"`
	IsOther  bool                         `json:"isOther,omitempty"`
	IsSecret bool                         `json:"isSecret,omitempty"`
	Options  []ToolRequestUserInputOption `json:"options,omitempty"`
}

// ToolRequestUserInputOption is one answer codex offers.
type ToolRequestUserInputOption struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// ToolRequestUserInputResponse holds the answers by question id; a
// question left out was not answered.
type ToolRequestUserInputResponse struct {
	Answers map[string]ToolRequestUserInputAnswer `json:"answers"`
}

// ToolRequestUserInputAnswer is the answer to one question.
type ToolRequestUserInputAnswer struct {
	Answers []string `json:"answers"`
}
