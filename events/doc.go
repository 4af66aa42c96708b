// Package events translates what codex reports about a turn into ACP
// session updates: the JSONL events of `codex exec --json`, and the
// notifications of `codex app-server`.
//
// It is pure: Parse decodes one exec line, an AppServer (one per codex
// thread) converts app-server notifications into the same Events, and a
// Translator (one per ACP session, living across turns) maps events to
// SessionUpdate values of the ACP SDK and reports how each turn ended.
// Running codex and sending the updates is the caller's job. The mapping and
// its decisions are documented in docs/events.md.
//
// The SDK (github.com/coder/acp-go-sdk, package acp) is imported as acpsdk
// here: in this repository acp names codexacp's agent package.
package events
