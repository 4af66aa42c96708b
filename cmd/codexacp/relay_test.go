package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestRelayCommand: codex is given this binary as the relay only with
// CODEXACP_MCP_RELAY=on and while its path still names the running
// executable; otherwise the HTTP route.
func TestRelayCommand(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no executable path on this system:", err)
	}
	for _, v := range []string{"", "off", "1"} {
		t.Setenv(relayEnv, v)
		if got := relayCommand(log); got != "" {
			t.Errorf("with %s=%q: relayCommand = %q, want the HTTP route", relayEnv, v, got)
		}
	}
	t.Setenv(relayEnv, "on")
	if got := relayCommand(log); got != exe {
		t.Errorf("with %s=on: relayCommand = %q, want the running executable %q", relayEnv, got, exe)
	}

	if err := sameAsRunning(exe); err != nil {
		t.Errorf("sameAsRunning(the executable) = %v", err)
	}
	dir := t.TempDir()
	if err := sameAsRunning(filepath.Join(dir, "gone")); err == nil {
		t.Error("sameAsRunning(a missing file) = nil")
	}
	if err := sameAsRunning(dir); err == nil {
		t.Error("sameAsRunning(a directory) = nil")
	}
	if runtime.GOOS == "linux" {
		// Another file at the path (an upgrade replaced the binary).
		other := filepath.Join(dir, "codexacp")
		if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := sameAsRunning(other); err == nil {
			t.Error("sameAsRunning(another file) = nil, want an error")
		}
	}
}
