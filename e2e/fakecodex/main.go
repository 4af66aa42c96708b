// Command fakecodex stands in for the codex CLI when a recorded transcript
// is replayed (see docs/replay.md). The agent runs it exactly as it runs
// codex:
//
//   - `fakecodex --version` and `fakecodex debug models --bundled` answer the
//     agent's model-catalog set-up (a one-model catalog with the recorded
//     context window);
//   - `fakecodex exec ... [resume <thread>] -` replays the transcript's next
//     codex run: it reads the prompt from stdin, connects to the embedded MCP
//     server named in `-c mcp_servers.acp={...}` (like codex, at start-up:
//     it starts the agent's relay, command=..., with env and env_vars, or
//     reaches url=... with the bearer token from bearer_token_env_var), prints the
//     recorded JSONL lines, recreates each file a tool first touched as it was
//     on disk, makes the recorded tool calls at the recorded points (waiting
//     for each result and comparing it with the recorded one, see
//     toolresult.go), appends the recorded rollout records (the refused
//     commands the agent reads from codex's rollout, codex exec printing
//     nothing for them) to the rollout under CODEX_HOME, each before the
//     line the agent read it at, and exits as codex did. On SIGINT it exits 1 like
//     codex; a run that was cancelled when recorded prints its lines and then
//     waits for SIGINT.
//   - `fakecodex app-server ...` replays the transcript's next app-server
//     process (appserver entries, see appserver.go): it answers the agent's
//     JSON-RPC requests with the recorded answers (matched by method and
//     order, under the agent's live ids; a request that differs from the
//     recording in what matters gets an error answer saying how), writes the
//     recorded notifications and codex's own requests (approvals) in order,
//     waits for the agent's answers where the recording has them (another
//     answer than recorded ends it with status 2), recreates files and makes
//     the recorded tool calls against the tool server the live thread/start
//     or thread/resume config names, with the token it carries. It exits 0
//     when its stdin ends, like codex app-server.
//
// Environment:
//
//	CODEXACP_FAKE_TRANSCRIPT  the transcript (required)
//	CODEXACP_FAKE_STATE       a directory where runs are counted (required for exec and app-server)
//	CODEXACP_FAKE_ROOT        files are recreated only under this directory (unset: never)
//	CODEXACP_FAKE_GATES=ADDR  keep in step with the replay harness, which listens on the loopback
//	                          address ADDR (package e2e/replay/gates): mark run-<n> once the run is
//	                          claimed; before the tool call at transcript position i, wait for
//	                          gate-<i> (opened once the agent has sent every message that preceded
//	                          the call in the recording); after printing the line at position i,
//	                          mark line-<i> (the harness sends the editor's next message, e.g. a
//	                          cancel, only once the codex output before it was printed); an
//	                          app-server line that came after more agent messages than the codex
//	                          line before it waits for gate-<i> too; once gate another-way opens
//	                          (the replay went another way), the app-server answers skills/list at once
//
// A run that does not match the recording (resume or not, thread id,
// prompt) fails with exit status 2 and says why on stderr, which the agent
// passes to the editor, so the replay diff shows it. An app-server request
// that does not match gets a JSON-RPC error whose message says why, which
// the agent passes on too, and takes the recorded one's place: the script
// goes on past it. A tool result that differs from the recorded one
// is reported on stderr and in the file tool-result-<i> in the state
// directory, which fails the replay; the run goes on as recorded.
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
