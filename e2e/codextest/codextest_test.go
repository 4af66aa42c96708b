package codextest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/codex"
)

// TestPinnedVersion: CI runs the e2e suite on the two codex versions the
// package files pin, and those are the range codex names as tested:
// e2e/package.json pins the newest (PinnedVersion, codex.NewestTested),
// e2e/codex-oldest/package.json the oldest (OldestPinnedVersion,
// codex.OldestTested). A pin moved without the range, or the range without
// a pin, is wrong.
func TestPinnedVersion(t *testing.T) {
	for _, tc := range []struct {
		file, const_, pin, tested string
	}{
		{"package.json", "PinnedVersion", PinnedVersion, codex.NewestTested},
		{filepath.Join("codex-oldest", "package.json"), "OldestPinnedVersion", OldestPinnedVersion, codex.OldestTested},
	} {
		data, err := os.ReadFile(filepath.Join("..", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		var pkg struct {
			Dependencies map[string]string `json:"dependencies"`
		}
		if err := json.Unmarshal(data, &pkg); err != nil {
			t.Fatalf("e2e/%s: %v", tc.file, err)
		}
		if pin := pkg.Dependencies["@openai/codex"]; pin != tc.pin {
			t.Errorf("e2e/%s pins @openai/codex %q; %s is %q", tc.file, pin, tc.const_, tc.pin)
		}
		if tc.pin != tc.tested {
			t.Errorf("%s is %s, but the tested range is %s", tc.const_, tc.pin, codex.TestedRange())
		}
	}
}

// TestLocateNpmShim: CODEXACP_CODEX_PATH may name an npm install's
// node_modules/.bin/codex (CI's run on the oldest codex does); the native
// binary behind it is what runs.
func TestLocateNpmShim(t *testing.T) {
	modules := filepath.Join(t.TempDir(), "node_modules")
	native, ok := fakeNpmInstall(t, modules)
	if !ok {
		t.Skip("no npm platform package for this platform")
	}
	t.Setenv(EnvCodexPath, filepath.Join(modules, ".bin", "codex"))
	if path, why := locate(); path != native {
		t.Errorf("locate = %q, %q; want the native binary %s", path, why, native)
	}
}

func TestLocateExplicitPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "codex")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	data := filepath.Join(dir, "data")
	os.WriteFile(data, nil, 0o644)

	tests := []struct {
		env, want, why string
	}{
		{exe, exe, ""},
		{data, "", "not an executable"},
		{filepath.Join(dir, "none"), "", "not an executable"},
		{dir, "", "not an executable"},
	}
	for _, tt := range tests {
		t.Setenv(EnvCodexPath, tt.env)
		path, why := locate()
		if path != tt.want || !strings.Contains(why, tt.why) {
			t.Errorf("%s=%s: locate = %q, %q; want %q, %q", EnvCodexPath, tt.env, path, why, tt.want, tt.why)
		}
	}
}

func TestLocatePinned(t *testing.T) {
	t.Setenv(EnvCodexPath, "")
	path, why := locate()
	if path == "" {
		if !strings.Contains(why, "npm ci") {
			t.Errorf("why = %q, want the install command", why)
		}
		return
	}
	if !strings.Contains(path, filepath.Join("e2e", "node_modules", "@openai")) {
		t.Errorf("pinned codex at %q, want it under e2e/node_modules", path)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("CODEX_HOME", "/somewhere/else")
	t.Setenv("OPENAI_API_KEY", "sk-real")
	t.Setenv("RUST_BACKTRACE", "1")
	t.Setenv("CODEXACP_KEEP", "yes")
	env, home := Env(t)
	if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
		t.Fatalf("home %q: %v", home, err)
	}
	if !slices.Contains(env, "CODEX_HOME="+home) || !slices.Contains(env, "CODEXACP_KEEP=yes") {
		t.Errorf("env lacks CODEX_HOME or an unrelated variable: %q", env)
	}
	for _, kv := range env {
		if kv == "CODEX_HOME=/somewhere/else" || strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "RUST_BACKTRACE=") {
			t.Errorf("env keeps %q", kv)
		}
	}
}

// fakeNpmInstall lays out what `npm install @openai/codex` leaves in
// modules on this platform (the shim's link in .bin, the platform package
// hoisted) and returns the native binary; false where there is no such
// layout to fake (Windows writes wrappers, not links).
func fakeNpmInstall(t *testing.T, modules string) (string, bool) {
	t.Helper()
	triples := map[string][2]string{
		"linux/amd64":  {"codex-linux-x64", "x86_64-unknown-linux-musl"},
		"linux/arm64":  {"codex-linux-arm64", "aarch64-unknown-linux-musl"},
		"darwin/amd64": {"codex-darwin-x64", "x86_64-apple-darwin"},
		"darwin/arm64": {"codex-darwin-arm64", "aarch64-apple-darwin"},
	}
	p, ok := triples[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		return "", false
	}
	native := filepath.Join(modules, "@openai", p[0], "vendor", p[1], "bin", "codex")
	shim := filepath.Join(modules, "@openai", "codex", "bin", "codex.js")
	for _, f := range []string{native, shim} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(modules, ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "@openai", "codex", "bin", "codex.js"), filepath.Join(modules, ".bin", "codex")); err != nil {
		t.Fatal(err)
	}
	return native, true
}
