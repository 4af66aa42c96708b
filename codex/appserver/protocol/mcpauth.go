package protocol

// Signing in to an MCP server of codex's config that needs OAuth: codex
// runs the login (its loopback callback takes the redirect, its
// credentials store keeps the token, which never crosses the protocol),
// codexacp shows the user the authorization page, waits for
// McpServerOauthLoginCompleted and has codex reconnect its servers.
const (
	McpServerOauthLogin Request[McpServerOauthLoginParams, McpServerOauthLoginResponse] = "mcpServer/oauth/login"
	McpServerReload     Request[McpServerReloadParams, McpServerRefreshResponse]        = "config/mcpServer/reload"

	McpServerOauthLoginCompleted Notification[McpServerOauthLoginCompletedNotification] = "mcpServer/oauthLogin/completed"
	McpServerStartupStatus       Notification[McpServerStatusUpdatedNotification]       = "mcpServer/startupStatus/updated"
)

// McpServerOauthLoginParams start an OAuth login to the server Name.
// TimeoutSecs bounds how long codex's callback waits for the browser;
// ThreadID names a loaded thread whose configuration has the server (its
// project's), none: the user's configuration.
type McpServerOauthLoginParams struct {
	Name        string   `json:"name"`
	Scopes      []string `json:"scopes,omitempty"`
	ThreadID    string   `json:"threadId,omitempty"`
	TimeoutSecs int64    `json:"timeoutSecs,omitempty"`
}

// McpServerOauthLoginResponse is the page the user opens to sign in, and
// the login's id, which its completion names (older servers omit it).
type McpServerOauthLoginResponse struct {
	AuthorizationURL string `json:"authorizationUrl"`
	LoginID          string `json:"loginId,omitempty"`
}

// McpServerOauthLoginCompletedNotification ends a login: Success, or why
// not in Error.
type McpServerOauthLoginCompletedNotification struct {
	Name     string `json:"name"`
	Success  bool   `json:"success"`
	Error    string `json:"error,omitempty"`
	LoginID  string `json:"loginId,omitempty"`
	ThreadID string `json:"threadId,omitempty"`
}

// McpServerReloadParams are config/mcpServer/reload's (none).
type McpServerReloadParams struct{}

// McpServerRefreshResponse is the (empty) answer to config/mcpServer/reload.
type McpServerRefreshResponse struct{}

// McpServerStatusUpdatedNotification is a change of an MCP server's
// startup for a thread: Status is one of McpStarting, …; a failed start
// says why in Error, and FailureReason is McpReauthenticationRequired when
// the server wants the user to sign in again.
type McpServerStatusUpdatedNotification struct {
	ThreadID      string `json:"threadId,omitempty"`
	Name          string `json:"name"`
	Status        string `json:"status"`
	Error         string `json:"error,omitempty"`
	FailureReason string `json:"failureReason,omitempty"`
}

// MCP server startup states, and the failure reason that asks for a
// sign-in.
const (
	McpStarting                 = "starting"
	McpReady                    = "ready"
	McpFailed                   = "failed"
	McpCancelled                = "cancelled"
	McpReauthenticationRequired = "reauthenticationRequired"
)

// McpServerStatus.AuthStatus values (codex's McpAuthStatus).
const (
	McpAuthUnsupported = "unsupported"
	McpAuthNotLoggedIn = "notLoggedIn"
	McpAuthBearerToken = "bearerToken"
	McpAuthOAuth       = "oAuth"
)
