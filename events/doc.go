// Package events translates the JSONL events of `codex exec --json` into ACP
// session updates.
//
// It is pure: Parse decodes one line, and a Translator (one per ACP session,
// living across turns) maps events to acp.SessionUpdate values and reports
// how each turn ended. Running codex and sending the updates is the caller's
// job. The mapping and its decisions are documented in docs/events.md.
package events
