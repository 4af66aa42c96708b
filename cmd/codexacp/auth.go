package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"

	"github.com/codexacp/codexacp/acp"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/internal/recovery"
)

// prepareAuth sets up sign-in (acp.Auth): with a custom model provider
// nothing; else `codex login status` runs once in the background when
// later opens (after the answer to initialize, or when StartupStatus is
// first asked) and session/new waits for it only when no API key is in
// the environment. args are the agent's own flags,
// for the command line that runs `codexacp … login` in a terminal.
func prepareAuth(ctx context.Context, later *startGate, log *slog.Logger, codexPath string, config []string, backend string, args []string) acp.Auth {
	if p := codex.CustomProvider(config); p != "" {
		log.Info("custom model provider; no sign-in needed", "provider", p)
		return acp.Auth{CustomProvider: p}
	}
	status := func(ctx context.Context) (codex.Login, error) { return codex.LoginStatus(ctx, codexPath, config, nil) }
	ready := make(chan struct{})
	var startLogin codex.Login
	var startErr error
	go func() {
		defer close(ready)
		defer recovery.Recover(log, "codex login status", &startErr)
		if !later.wait() {
			startErr = errors.New("the agent left before codex login status ran")
			return
		}
		startLogin, startErr = status(ctx)
		log.Debug("codex login status", "login", startLogin, "err", startErr)
	}()
	auth := acp.Auth{
		LoginStatus: status,
		StartupStatus: func(ctx context.Context) (codex.Login, error) {
			later.open()
			select {
			case <-ready:
				return startLogin, startErr
			case <-ctx.Done():
				return codex.LoginNone, context.Cause(ctx)
			}
		},
		Logout:  func(ctx context.Context) error { return codex.Logout(ctx, codexPath, config, nil) },
		EnvKeys: backend == backendExec,
	}
	if self, err := os.Executable(); err == nil {
		auth.LoginCommand = append(append([]string{self}, args...), "login")
	}
	return auth
}

// execEnv is the environment of codex exec runs (nil: the agent's own).
// codex exec reads an API key from CODEX_API_KEY but not from
// OPENAI_API_KEY (docs/codex.md#pinned-codex-facts), so an OPENAI_API_KEY
// is passed on as CODEX_API_KEY — unless codex has a login of its own (a
// key in CODEX_API_KEY would win over it), which this waits to know.
func execEnv(ctx context.Context, log *slog.Logger, auth acp.Auth) []string {
	key := os.Getenv("OPENAI_API_KEY")
	if key == "" || os.Getenv("CODEX_API_KEY") != "" || auth.StartupStatus == nil {
		return nil
	}
	if _, err := auth.StartupStatus(ctx); !errors.Is(err, codex.ErrNotLoggedIn) {
		return nil
	}
	log.Info("codex is not logged in: OPENAI_API_KEY is passed to codex exec as CODEX_API_KEY")
	return append(os.Environ(), "CODEX_API_KEY="+key)
}

// loginArgs tells `codexacp [flags] login` (how a terminal sign-in method
// runs the agent) from the agent, and returns the flags.
func loginArgs(args []string) ([]string, bool) {
	switch {
	case len(args) > 0 && args[0] == "login":
		return args[1:], true
	case len(args) > 0 && args[len(args)-1] == "login":
		return args[:len(args)-1], true
	}
	return args, false
}

// login runs `codex login` (the user's -c passed on) on the terminal the
// agent was started in, for terminal sign-in.
func login(o *options) error {
	path, err := codex.Find(o.codexPath)
	if err != nil {
		return err
	}
	args := []string{"login"}
	for _, c := range o.config {
		args = append(args, "-c", c)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("codex login: %w", err)
	}
	return nil
}
