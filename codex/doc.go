// Package codex runs the Codex CLI non-interactively: it builds the
// `codex exec --json` command line for a first or resumed turn, runs the
// process in its own process group, hands each JSONL line of its stdout to the
// caller in order, and cancels it the way codex expects (SIGINT, then SIGKILL
// of the whole group after a grace period).
//
// AppServer is the persistent alternative: one `codex app-server` process
// hosting many threads, spoken to in JSON-RPC over its stdio. It routes the
// server's notifications and requests (approvals) to a handler per thread,
// answers requests nobody handles, and owns the process's lifetime (process
// group, parent-death signal, watchdog, Close). KillTagged ends the commands
// an interrupted turn leaves running, found by a tag in their environment.
//
// It also locates the codex executable (preferring the native binary inside an
// npm install over the node shim) and prepares a model catalog without codex's
// own apply_patch tool, so that file edits go through the editor.
//
// The package knows nothing about ACP or the meaning of the events; see
// package events for their translation.
package codex
