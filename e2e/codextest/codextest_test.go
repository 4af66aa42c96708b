package codextest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/codex"
)

// TestPinnedVersion: PinnedVersion is what e2e/package.json pins, and
// lies in the range codex names as tested (CI tests the pin, so a range
// that leaves it out, or a pin moved without the range, is wrong).
func TestPinnedVersion(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatalf("e2e/package.json: %v", err)
	}
	if pin := pkg.Dependencies["@openai/codex"]; pin != PinnedVersion {
		t.Errorf("e2e/package.json pins @openai/codex %q; PinnedVersion is %q", pin, PinnedVersion)
	}
	if codex.CompareVersions(PinnedVersion, codex.OldestTested) < 0 || codex.CompareVersions(PinnedVersion, codex.NewestTested) > 0 {
		t.Errorf("PinnedVersion %s is outside the tested range %s", PinnedVersion, codex.TestedRange())
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
