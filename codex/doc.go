// Package codex is what codexacp knows of the Codex CLI outside a turn:
// where it is and which version (Find, NativeBinary, Version, VersionNote
// against the tested range), its model catalog without codex's own
// apply_patch tool (ModelCatalog, Models, ContextWindow), the user's
// configuration (UserConfig: sandbox, approval policy, model and effort,
// as codex resolves them; ParseConfigRead reads them from an app-server's
// config/read; DefaultOverrides, ConfiguredValue), its login (LoginStatus,
// Logout, CustomProvider), the skills it has (Skill) and where it keeps a
// thread's rollout (Home, RolloutPath).
//
// Running codex lives in packages of its own: codex/execrun runs `codex
// exec` turns, codex/appserver is the `codex app-server` client (and its
// ConfigServer, which answers config/read and skills/list), codex/proc is
// the process control both share.
//
// The package knows nothing about ACP.
package codex
