// Package proc starts and ends codex processes, for the exec runner
// (codex/execrun), the app-server client (codex/appserver) and the short
// codex commands of package codex.
//
// Start starts a command as a Process: in a process group of its own, with
// a parent-death signal (Linux) and a watchdog that ends the group when the
// agent dies without cleaning up (a shell script in the group on Unix, a
// kill-on-close job object on Windows), its three pipes owned by the
// caller. A Process is interrupted (Interrupt: SIGINT; Windows: its job
// terminated), killed with its group (KillGroup) or with everything below
// it (KillTree); SuperviseCancel does the cancel of a turn (SIGINT, then
// SIGKILL of the group after a grace period). ExitError describes a
// non-zero exit with the tail of stderr (StderrLog), Env is the environment
// codex gets (loopback exempt from the user's HTTP proxy, for the agent's
// tool host), ReadLines splits its output into lines of any length.
//
// KillTagged and KillTaggedAnywhere end the commands an interrupted
// app-server turn leaves running, found by a tag in their environment
// (/proc, Linux only); SnapshotBelow records a process's descendants so
// that what survives it can be killed.
//
// The package knows nothing of codex's command line or protocol.
package proc
