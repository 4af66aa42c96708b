// Package appserver is the client of `codex app-server`: one codex process
// hosting many threads, spoken to in JSON-RPC over its stdio.
//
// Start starts the process and performs the handshake; the Server it
// returns sends requests (Call) and routes the server's notifications and
// requests (approvals, questions) to a Handler per thread (Route), answers
// requests nobody handles, and owns the process's lifetime (process group,
// parent-death signal, watchdog, Close; see package proc). RPCError is a
// JSON-RPC error either way.
//
// The requests, notifications and server requests codexacp uses are typed
// in package protocol; Call and CallUnrecorded send one and return its
// result type:
//
//	res, err := appserver.Call(ctx, server, protocol.ThreadStart, protocol.ThreadStartParams{…})
//	// res is a protocol.ThreadStartResponse
//
// ConfigServer is an app-server started on demand that runs no turn and
// answers questions about codex's configuration (config/read as a
// codex.UserConfig, skills/list as codex.Skills), ending after an idle
// period.
//
// The package knows nothing about ACP or the meaning of the events; see
// package events for their translation.
package appserver
