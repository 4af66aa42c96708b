package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRolloutPath(t *testing.T) {
	home := t.TempDir()
	const id = "01a20602-22f9-7a33-a8c4-4064f84c2b10"
	dir := filepath.Join(home, "sessions", "2026", "11", "23")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "rollout-2026-11-23T01-25-33-"+id+".jsonl")
	for _, p := range []string{want, filepath.Join(dir, "rollout-2026-11-23T01-25-33-other.jsonl")} {
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := RolloutPath(home, id)
	if err != nil || got != want {
		t.Errorf("RolloutPath = %q, %v; want %q", got, err, want)
	}
	if _, err := RolloutPath(home, "missing"); err == nil || !strings.Contains(err.Error(), "no rollout") {
		t.Errorf("missing thread: err = %v", err)
	}
	if _, err := RolloutPath(home, "../x*"); err == nil {
		t.Error("a thread id with path or glob characters was accepted")
	}
}

func TestHome(t *testing.T) {
	t.Setenv("CODEX_HOME", "/custom/codex")
	if h, err := Home(); err != nil || h != "/custom/codex" {
		t.Errorf("Home = %q, %v", h, err)
	}
	t.Setenv("CODEX_HOME", "")
	t.Setenv("HOME", "/home/u")
	if h, err := Home(); err != nil || h != "/home/u/.codex" {
		t.Errorf("Home = %q, %v", h, err)
	}
}
