// Package codextest gives tests the pinned real codex binary and an isolated
// environment to run it in.
//
// The binary is the one `cd e2e && npm ci` installs from e2e/package-lock.json
// (@openai/codex PinnedVersion), or $CODEXACP_CODEX_PATH (CI's second run
// names the oldest supported codex there, OldestPinnedVersion, installed
// by `cd e2e/codex-oldest && npm ci`). When it is missing, tests
// that need it are skipped, unless CODEXACP_E2E=1 (set by CI), which makes a
// missing binary a failure: the real-codex tests must not silently vanish.
package codextest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/codex/execrun"
	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/e2e/npmbin"
)

const (
	// PinnedVersion is the codex version e2e/package.json pins: the
	// newest tested (codex.NewestTested), the suite's main run.
	PinnedVersion = "0.171.0"
	// OldestPinnedVersion is the codex version e2e/codex-oldest/package.json
	// pins: the oldest supported (codex.OldestTested), CI's second run.
	OldestPinnedVersion = "0.169.0"
	// EnvCodexPath names a codex binary to use instead of the pinned one.
	EnvCodexPath = "CODEXACP_CODEX_PATH"
	// EnvRequired, set to 1, turns a missing codex into a test failure.
	EnvRequired = npmbin.EnvRequired
)

// Binary returns the codex executable for real-codex tests, skipping the test
// (or failing it when CODEXACP_E2E=1) if there is none.
func Binary(t testing.TB) string {
	t.Helper()
	path, why := locate()
	npmbin.Require(t, "real codex", path, why)
	npmbin.CheckVersion(t, "codex", path, PinnedVersion)
	return path
}

// locate finds the codex binary, or says why there is none.
func locate() (path, why string) {
	if p := os.Getenv(EnvCodexPath); p != "" {
		if !npmbin.IsExecutable(p) {
			return "", EnvCodexPath + "=" + p + " is not an executable file"
		}
		// An npm install's node shim (node_modules/.bin/codex) runs as
		// the agent runs it: its native binary (codex.Find).
		if native, err := codex.Find(p); err == nil {
			return native, ""
		}
		return p, ""
	}
	modules, err := npmbin.NodeModules()
	if err != nil {
		return "", err.Error()
	}
	if p, ok := codex.NativeBinary(modules); ok {
		return p, ""
	}
	return "", "the pinned codex is not installed: run `cd e2e && npm ci`"
}

// Env returns the environment for a codex test run and its CODEX_HOME, a
// fresh temporary directory (sessions, sqlite state, logs). Variables that
// would reach a real account or change codex's output are removed: CODEX_*,
// OPENAI_*, RUST_BACKTRACE. HOME and the XDG directories point into the
// same temporary directory, so no dotfile of the machine's user takes part:
// codex's shell snapshot sources ~/.bashrc, which can take seconds (a pyenv
// rehash waiting for its lock) and outlive a cancelled turn.
func Env(t testing.TB) (env []string, home string) {
	t.Helper()
	home = t.TempDir()
	user := filepath.Join(home, "user")
	if err := os.Mkdir(user, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		key, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(key, "CODEX_"), strings.HasPrefix(key, "OPENAI_"), key == "RUST_BACKTRACE",
			key == "HOME", strings.HasPrefix(key, "XDG_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, "CODEX_HOME="+home, "HOME="+user,
		"XDG_CACHE_HOME="+filepath.Join(user, ".cache"), "XDG_STATE_HOME="+filepath.Join(user, ".local", "state"),
		"XDG_CONFIG_HOME="+filepath.Join(user, ".config")), home
}

// OfflineConfig switches off what makes codex 0.169 reach past loopback in a
// test run: remote plugin discovery (DNS lookups of api.github.com and
// chatgpt.com) and analytics (ab.chatgpt.com). Turns work without it; it
// keeps tests from touching the network and makes them faster.
var OfflineConfig = []string{"features.plugins=false", "analytics.enabled=false"}

// Runner returns a execrun.Runner for the pinned codex, in an isolated
// CODEX_HOME (returned too), whose model requests go to mock, with
// OfflineConfig.
func Runner(t testing.TB, mock *mockapi.Server) (r *execrun.Runner, home string) {
	t.Helper()
	path := Binary(t)
	env, home := Env(t)
	config := append(mockapi.CodexConfig(mock.URL()), OfflineConfig...)
	return &execrun.Runner{Path: path, Env: env, Config: config}, home
}
