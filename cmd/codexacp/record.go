package main

import (
	"log/slog"
	"os"

	"github.com/codexacp/codexacp/acp"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/record"
)

// startRecording opens the transcript at path and hooks the recorder into
// the agent's tool observers and session store reads (stateDir is the
// --state-dir, backend the --backend); the caller wraps stdin, stdout and
// the codex backend (Recorder.Backend for exec, Recorder.AppServerTrace
// for the app-server). A transcript that
// cannot be created — record.Create refuses a symbolic link, a file with
// other names, a FIFO or device — is refused with one error line at
// start-up, before the editor's initialize is read, and the agent runs
// without one: a dead agent would help nobody file a bug.
func startRecording(path string, log *slog.Logger, opts *acp.Options, stateDir, backend string) *record.Recorder {
	rec, err := record.Create(path)
	if err != nil {
		log.Error("not recording: --record's transcript cannot be created there", "err", err)
		return nil
	}
	log.Info("recording the session", "transcript", rec.Path())
	rec.AddSecretsFromEnv(os.Environ())
	// Session records and codex's rollouts lie under these; a replay has its
	// own. (No codex home is only an unloadable session, not a reason to stop.)
	codexHome, _ := codex.Home()
	rec.SetDirs(stateDir, codexHome)
	// Nor the user's home and the machine's name (a user posts the file).
	home, _ := os.UserHomeDir()
	host, _ := os.Hostname()
	rec.SetMachine(home, host)
	rec.SetBackend(backend)
	info := acp.ModelInfo{ContextWindow: opts.ContextWindow, Models: opts.Models}
	if opts.ModelInfo != nil {
		info = opts.ModelInfo() // waits for the catalog: the header names the models
	}
	rec.SetCatalog(info.Models, opts.DefaultModel, opts.DefaultEffort)
	if opts.CodexVersion != nil {
		rec.SetCodexVersion(opts.CodexVersion())
	}
	rec.Start("codexacp "+version, info.ContextWindow)

	opts.ObserveTools = rec.ToolObserver
	opts.ObserveStored = rec.Stored
	return rec
}

func closeRecording(rec *record.Recorder, log *slog.Logger) {
	if err := rec.Close(); err != nil {
		log.Error("transcript incomplete", "transcript", rec.Path(), "err", err)
	}
}
