package acpxtest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{"plain words stay bare", []string{"/bin/codexacp", "--log-level", "debug"}, "/bin/codexacp --log-level debug"},
		{"space", []string{"/a b/agent"}, `'/a b/agent'`},
		{"double quotes", []string{"-c", `model="gpt-5.5"`}, `-c 'model="gpt-5.5"'`},
		{"single quote", []string{"it's"}, `'it'\''s'`},
		{"backslash", []string{`a\b`}, `'a\b'`},
		{"toml table", []string{`p={name="mock", base_url="http://127.0.0.1:1/v1"}`}, `'p={name="mock", base_url="http://127.0.0.1:1/v1"}'`},
		{"newline", []string{"a\nb"}, "'a\nb'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CommandLine(tt.argv...)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("CommandLine(%q) = %q, want %q", tt.argv, got, tt.want)
			}
		})
	}
}

func TestCommandLineRejects(t *testing.T) {
	if _, err := CommandLine(); err == nil {
		t.Error("no command: no error")
	}
	if _, err := CommandLine("agent", ""); !errors.Is(err, ErrEmptyArg) {
		t.Errorf("empty argument: err = %v, want ErrEmptyArg", err)
	}
}

// TestRealAcpxSplitsCommandLineBack hands CommandLine's output to the pinned
// acpx and records the argv and environment the spawned "agent" (a shell
// script that exits at once) receives: acpx's own splitter is the oracle.
func TestRealAcpxSplitsCommandLineBack(t *testing.T) {
	acpx := Binary(t)
	dir := filepath.Join(t.TempDir(), "it's a dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(dir, "agent")
	out := filepath.Join(t.TempDir(), "argv")
	script := "#!/bin/sh\nprintf '%s\\0' \"$0\" \"$@\" > \"$ACPXTEST_OUT\"\nprintf '%s' \"$ACPXTEST_PROBE\" > \"$ACPXTEST_OUT.env\"\n"
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	argv := []string{agent, "plain", "two words", `model="gpt-5.5"`, "it's", `back\slash`, `"\"`, "tab\there", "line\nbreak",
		`p={name="mock", base_url="http://127.0.0.1:1/v1", wire_api="responses"}`, "ünïcode", "$HOME", "a;b|c&d"}
	line, err := CommandLine(argv...)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, acpx, "--format", "json", "--cwd", t.TempDir(), "--agent", line, "exec", "hi")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "ACPXTEST_OUT="+out, "ACPXTEST_PROBE=passed through")
	// The script exits before answering initialize; acpx's exit code is
	// not what this test is about.
	combined, _ := cmd.CombinedOutput()

	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("acpx did not run the agent: %v\n%s", err, combined)
	}
	got := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	if !slices.Equal(got, argv) {
		t.Errorf("agent argv = %q\nwant %q", got, argv)
	}
	if env, err := os.ReadFile(out + ".env"); err != nil || !bytes.Equal(env, []byte("passed through")) {
		t.Errorf("acpx did not pass its environment to the agent: %q, %v", env, err)
	}
}
