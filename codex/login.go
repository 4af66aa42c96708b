package codex

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/internal/regularfile"
)

// LoginTimeout bounds one `codex login status` or `codex logout` run when
// the caller's context has no deadline: far above what the command takes
// (docs/codex.md#pinned-codex-facts).
const LoginTimeout = 10 * time.Second

// ErrNotLoggedIn reports that codex has no stored login: `codex login
// status` exited with status 1.
var ErrNotLoggedIn = errors.New("codex is not logged in")

// Login is the kind of stored login `codex login status` reports.
type Login string

// Kinds of login. Only an API key saved in codex's home is one that an API
// key from elsewhere may replace without losing anything.
const (
	LoginNone    Login = ""        // no login (or none known: with an error)
	LoginChatGPT Login = "ChatGPT" // "Logged in using ChatGPT"
	LoginAPIKey  Login = "API key" // "API key configured - sk-…" (`codex login --with-api-key`)
	// LoginOther is any other login codex reports (an access token, a
	// workload identity, Amazon Bedrock's keys…) or one whose words this
	// version does not know.
	LoginOther Login = "other"
)

// LoginStatus runs `codex login status` (path: the codex executable; config:
// the user's -c overrides; env: its environment, nil for os.Environ()) and
// returns the kind of login codex has stored, with a nil error: exit status
// 0. Codex answers 1 when it has none, whatever API keys are in the
// environment; that is ErrNotLoggedIn, wrapped with what codex printed. Any
// other failure (codex did not run, another status, the timeout) is
// returned as it is.
func LoginStatus(ctx context.Context, path string, config, env []string) (Login, error) {
	out, err := runLogin(ctx, path, config, env, "login", "status")
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		if out == "" {
			return LoginNone, ErrNotLoggedIn
		}
		return LoginNone, fmt.Errorf("%w (%s)", ErrNotLoggedIn, out)
	case err != nil:
		return LoginNone, err
	}
	return loginKind(out), nil
}

// loginKind reads the kind of login from what `codex login status` printed
// (its lines joined with "; "): codex-rs/cli's login status texts.
func loginKind(out string) Login {
	for _, line := range strings.Split(out, "; ") {
		switch {
		case strings.HasPrefix(line, "Logged in using ChatGPT"):
			return LoginChatGPT
		case strings.HasPrefix(line, "API key configured"):
			return LoginAPIKey
		}
	}
	return LoginOther
}

// Logout runs `codex logout`, which removes codex's stored login (codex
// answers 0 whether or not there was one).
func Logout(ctx context.Context, path string, config, env []string) error {
	_, err := runLogin(ctx, path, config, env, "logout")
	return err
}

// runLogin runs `codex <args> -c …` without stdin and returns what it
// printed (both streams, codex's start-up warnings left out, one line).
func runLogin(ctx context.Context, path string, config, env []string, args ...string) (string, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, LoginTimeout)
		defer cancel()
	}
	what := "codex " + strings.Join(args, " ")
	for _, c := range config {
		args = append(args, "-c", c)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = proc.Env(env, nil)
	cmd.WaitDelay = time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return "", fmt.Errorf("%s: %w", what, err)
		}
	}
	var lines []string
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "WARNING:") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "; "), err
}

// CustomProvider returns the model provider codex is configured to use
// when it is not OpenAI's own ("" for openai or none configured): the last
// `model_provider` of config (the user's -c), else the top-level
// `model_provider` of config.toml in codex's home. A custom provider brings
// its own credentials (its env_key, or none at all), so codex's login does
// not matter for it. Profiles are not looked at.
func CustomProvider(config []string) string {
	p := ConfiguredValue(config, "model_provider")
	if p == "" {
		if home, err := Home(); err == nil {
			p = tomlTopLevel(filepath.Join(home, "config.toml"), "model_provider")
		}
	}
	if p == "openai" {
		return ""
	}
	return p
}

// tomlTopLevel reads a top-level string key of a TOML file (before its
// first table header), "" when there is none or the file cannot be read.
func tomlTopLevel(path, key string) string {
	b, err := regularfile.ReadFile(path, configFileMax, regularfile.FollowLink)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			break
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != key {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.Index(v, "#"); i >= 0 && !strings.HasPrefix(v, `"`) && !strings.HasPrefix(v, "'") {
			v = strings.TrimSpace(v[:i])
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
			if j := strings.IndexByte(v[1:], v[0]); j >= 0 {
				return v[1 : j+1]
			}
		}
		return v
	}
	return ""
}
