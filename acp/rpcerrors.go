package acp

import (
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"
)

// JSON-RPC errors the agent answers with. The SDK's constructors give the
// codes; the message is ours. The SDK's message is a bare title ("Invalid
// params") with the detail left to data, but the message is what a client
// shows the user, so ours carries the detail. Data stays empty: the detail
// would only repeat.

// Codes the agent compares with, or sends without an SDK constructor.
// TestRPCErrorCodes checks them against the SDK's constructors.
const (
	codeMethodNotFound = -32601 // JSON-RPC Method not found (acpsdk.NewMethodNotFound)
	// codeResourceNotFound is ACP's "Resource not found", for which the SDK
	// has no constructor: the agent's answer for an unknown session, and the
	// editors' for a missing file.
	codeResourceNotFound = -32002
)

func withMessage(e *acpsdk.RequestError, msg string) *acpsdk.RequestError {
	e.Message = msg
	return e
}

func invalidParams(detail string) *acpsdk.RequestError {
	return withMessage(acpsdk.NewInvalidParams(nil), "Invalid params: "+detail)
}

// internalError is -32603 with msg as the whole message: what failed, said
// plainly ("Codex turn failed: …").
func internalError(msg string) *acpsdk.RequestError {
	return withMessage(acpsdk.NewInternalError(nil), msg)
}

// unknownSession is ACP's "Resource not found", the code on which acpx
// creates a new session instead of failing.
func unknownSession(id acpsdk.SessionId) *acpsdk.RequestError {
	return &acpsdk.RequestError{Code: codeResourceNotFound, Message: fmt.Sprintf("Resource not found: unknown session %q", id)}
}
