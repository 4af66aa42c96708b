// Package execrun runs the Codex CLI non-interactively, one process per
// turn: a Runner builds the `codex exec --json` command line of an
// Invocation (a first turn, a resumed thread, or a Review), runs the
// process (package proc: its own process group, parent-death signal,
// watchdog), writes the prompt to its stdin, hands each JSONL line of its
// stdout to the caller in order, and cancels it the way codex expects
// (SIGINT, then SIGKILL of the whole group after a grace period).
// Prestart starts the process of a likely next turn ahead, to wait for its
// prompt.
//
// The package knows nothing about ACP or the meaning of the events; see
// package events for their translation.
package execrun
