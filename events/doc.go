// Package events translates what codex reports about a turn into ACP
// session updates: the JSONL events of `codex exec --json`, and the
// notifications of `codex app-server`.
//
// It is pure: Parse decodes one exec line, an AppServer (one per codex
// thread) converts app-server notifications into the same Events, and a
// Translator (one per ACP session, living across turns) maps events to
// acp.SessionUpdate values and reports how each turn ended. Running codex
// and sending the updates is the caller's job. The mapping and its
// decisions are documented in docs/events.md.
package events
