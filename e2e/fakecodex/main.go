// Command fakecodex stands in for the codex CLI when a recorded transcript
// is replayed (see docs/replay.md). The agent runs it exactly as it runs
// codex:
//
//   - `fakecodex --version` and `fakecodex debug models --bundled` answer the
//     agent's model-catalog set-up (a one-model catalog with the recorded
//     context window);
//   - `fakecodex exec ... [resume <thread>] -` replays the transcript's next
//     codex run: it reads the prompt from stdin, connects to the embedded MCP
//     server named in `-c mcp_servers.acp={url=...}` with the bearer token
//     from the variable that names (like codex, at start-up), prints the
//     recorded JSONL lines, recreates each file a tool first touched as it was
//     on disk, makes the recorded tool calls at the recorded points (waiting
//     for each result), and exits as codex did. On SIGINT it exits 1 like
//     codex; a run that was cancelled when recorded prints its lines and then
//     waits for SIGINT.
//
// Environment:
//
//	CODEXACP_FAKE_TRANSCRIPT  the transcript (required)
//	CODEXACP_FAKE_STATE       a directory where runs are counted (required for exec)
//	CODEXACP_FAKE_ROOT        files are recreated only under this directory (unset: never)
//	CODEXACP_FAKE_GATES=1     synchronise with the replay harness through files in the state
//	                          directory: before the tool call at transcript position i, wait for
//	                          gate-<i> (made once the agent has sent every message that preceded
//	                          the call in the recording); after printing the line at position i,
//	                          make line-<i> (the harness sends the editor's next message, e.g. a
//	                          cancel, only once the codex output before it was printed)
//
// A run that does not match the recording (resume or not, thread id,
// prompt) fails with exit status 2 and says why on stderr, which the agent
// passes to the editor, so the replay diff shows it.
package main

import (
	"os"
	"os/signal"
)

func main() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr, sigs))
}
