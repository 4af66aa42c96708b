// Package protocol is the part of codex app-server's JSON-RPC protocol
// that codexacp speaks, as Go types: each method is a typed constant next
// to its params and result types, so that a caller never writes a method
// name or builds a map.
//
//   - A Request[P, R] is a request codexacp sends: ThreadStart, TurnStart,
//     ConfigRead… appserver.Call(ctx, server, protocol.ThreadStart,
//     protocol.ThreadStartParams{…}) returns a ThreadStartResponse.
//   - A Notification[P] is a notification codex sends: TurnStarted,
//     ItemCompleted…; Decode reads its params.
//   - A ServerRequest[P, R] is a request codex sends and codexacp answers
//     with an R: CommandExecutionRequestApproval, ToolRequestUserInput,
//     McpServerElicitationRequest…
//
// The types hold the fields codexacp sends or reads, named as codex's own
// schema names them (`codex app-server generate-json-schema --experimental`
// of the pinned codex; its type names are kept where there is one, e.g.
// ListMcpServerStatusParams for mcpServerStatus/list). A field codexacp
// neither sends nor reads is left out, and decoding ignores it. The
// round-trip tests decode the messages of the recorded transcripts into
// these types: a request codexacp sent re-encodes to the same JSON, a
// message codex sent keeps every field the types name.
//
// The fields of a type codexacp sends are in the order of their JSON names,
// the order in which a map's keys are encoded: a request built from the
// types is the same bytes as one built as a map.
//
// To add a method: declare its params and result types here (in
// requests.go, notifications.go or serverrequests.go, by family), with the
// schema's field names and `omitempty`/`omitzero` where codexacp leaves a
// field out; add its constant to the list of its kind; add a recorded
// message of it to the round-trip test's table when a transcript has one.
// See docs/codex-app-server.md, "The protocol's types".
package protocol

import (
	"encoding/json"
	"fmt"
)

// Request is a client→server request: its value is the method name, P its
// params and R its result.
type Request[P, R any] string

// Method is the request's method name.
func (m Request[P, R]) Method() string { return string(m) }

// Notification is a server→client notification: its value is the method
// name, P its params.
type Notification[P any] string

// Method is the notification's method name.
func (n Notification[P]) Method() string { return string(n) }

// Decode reads the notification's params.
func (n Notification[P]) Decode(params json.RawMessage) (P, error) {
	return decode[P](string(n), params)
}

// ServerRequest is a server→client request: its value is the method name,
// P its params and R the result it is answered with.
type ServerRequest[P, R any] string

// Method is the request's method name.
func (r ServerRequest[P, R]) Method() string { return string(r) }

// Decode reads the request's params.
func (r ServerRequest[P, R]) Decode(params json.RawMessage) (P, error) {
	return decode[P](string(r), params)
}

// ClientNotification is a client→server notification without params.
type ClientNotification string

// Initialized ends the handshake, after the answer to Initialize.
const Initialized ClientNotification = "initialized"

func decode[P any](method string, params json.RawMessage) (P, error) {
	var p P
	if err := json.Unmarshal(params, &p); err != nil {
		return p, fmt.Errorf("codex app-server %s: params: %w", method, err)
	}
	return p, nil
}
