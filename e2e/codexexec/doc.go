// Package codexexec holds end-to-end tests of package codex against the
// pinned real codex binary and the mock Responses API: what `codex exec
// --json` prints for scripted model output, resume, failures, cancellation
// and the apply_patch-free model catalog, what thread/revert and
// thread/fork's beforeTurnId make codex forget (revert_test.go, for /undo),
// plus a benchmark of one raw turn.
// It has no non-test code.
package codexexec
