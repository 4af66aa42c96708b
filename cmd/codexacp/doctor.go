package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/mcp"
)

// doctor checks what the agent needs, the way the agent would find it, and
// prints one line per check to out. What the agent would log on the way
// (why the model catalog could not be built, codex's stderr and the
// app-server conversation at debug level) goes to log. It fails when codex
// cannot be used.
func doctor(ctx context.Context, o *options, out io.Writer, log *slog.Logger) error {
	fmt.Fprintln(out, "codexacp", version)
	var failed []string
	check := func(name string, ok bool, detail string) {
		mark := "ok  "
		if !ok {
			mark = "FAIL"
			failed = append(failed, name)
		}
		fmt.Fprintf(out, "%s %-13s %s\n", mark, name, detail)
	}
	// warn is a line that needs the user's eye but does not fail doctor.
	warn := func(name, detail string) { fmt.Fprintf(out, "warn %-13s %s\n", name, detail) }

	path, err := codex.Find(o.codexPath)
	if err != nil {
		check("codex", false, err.Error())
	} else {
		vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		v, verr := exec.CommandContext(vctx, path, "--version").Output()
		cancel()
		if verr != nil {
			check("codex", false, fmt.Sprintf("%s does not run: %v", path, verr))
		} else {
			check("codex", true, fmt.Sprintf("%s (%s)", path, strings.TrimSpace(string(v))))
			if note := codex.VersionNote(codex.VersionOf(string(v))); note != "" {
				warn("codex version", note)
			}
			catalog, window := modelCatalog(ctx, log, path, o.config)
			if catalog == "" {
				check("model catalog", false, "could not be built: codex would keep its own apply_patch tool (the log on stderr says why; --log-level debug shows more)")
			} else {
				check("model catalog", true, catalog+" (without apply_patch)")
				model := codex.ConfiguredModel(o.config)
				if model == "" {
					model = "codex's default"
				}
				check("model", window > 0, fmt.Sprintf("%s, context window %d tokens", model, window))
			}
			checkBackends(ctx, o, path, log, check)
			checkSignIn(ctx, o, path, check, warn)
		}
	}

	if o.stateDir == "" {
		check("state dir", true, "none: sessions are not kept across restarts")
	} else if err := writable(filepath.Join(o.stateDir, "sessions")); err != nil {
		check("state dir", false, err.Error())
	} else {
		check("state dir", true, filepath.Join(o.stateDir, "sessions"))
	}

	host, err := mcp.NewHost(&mcp.HostOptions{Logger: log, RelayCommand: relayCommand(log)})
	if err != nil {
		check("tool server", false, err.Error())
	} else {
		route := "; codex reaches it over HTTP"
		if r := host.Relay(); r != nil {
			route = "; codex reaches it through " + filepath.Base(r.Command) + " " + strings.Join(r.Args, " ") + " (a private unix socket)"
		}
		check("tool server", true, "listens on "+host.URL()+route)
		host.Close()
	}

	if len(failed) > 0 {
		return fmt.Errorf("doctor: %s failed", strings.Join(failed, ", "))
	}
	return nil
}

// writable creates dir if needed and checks a file can be created in it.
func writable(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return err
	}
	name := f.Name()
	return errors.Join(f.Close(), os.Remove(name))
}

// checkBackends checks that codex runs as each backend: `codex exec` answers
// --help, and `codex app-server` answers the handshake.
func checkBackends(ctx context.Context, o *options, path string, log *slog.Logger, check func(name string, ok bool, detail string)) {
	selected := func(b string) string {
		if o.backend == b {
			return " (selected)"
		}
		return ""
	}
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := exec.CommandContext(hctx, path, "exec", "--help").Run(); err != nil {
		check("exec", false, fmt.Sprintf("`codex exec --help` failed: %v", err))
	} else {
		check("exec", true, "codex exec runs"+selected(backendExec))
	}
	started := time.Now()
	server, err := appserver.Start(hctx, appserver.Options{
		Path: path, Config: o.config, Logger: log,
		ClientName: "codexacp-doctor", ClientVersion: version,
	})
	if err != nil {
		check("app-server", false, fmt.Sprintf("codex app-server did not start: %v", err))
		return
	}
	elapsed := time.Since(started)
	server.Close()
	check("app-server", true, fmt.Sprintf("codex app-server answered in %d ms%s", elapsed.Milliseconds(), selected(backendAppServer)))
}
