package e2e_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/codextest"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/stress"
)

// An editor that never reads the agent's stderr does not freeze it: with
// the pipe full, logs are dropped, requests are still answered, and once
// stderr is read again a line says how many log lines were lost.
func TestUnreadStderrDoesNotBlockRequests(t *testing.T) {
	env, _ := codextest.Env(t)
	// session/new logs its cwd: a long one (about 800 bytes, within every
	// system's path limit) makes each log line long, so fewer requests
	// overflow the pipe and the log queue.
	cwd := t.TempDir()
	for _, c := range "abc" {
		cwd = filepath.Join(cwd, strings.Repeat(string(c), 250))
	}
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	// No codex and no state: nothing but session/new and its log line.
	cmd := exec.Command(agentBin(t), "--codex-path", "/nonexistent/codex", "--log-level", "debug", "--state-dir=")
	cmd.Env = env
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stderrR.Close()
	cmd.Stderr = stderrW
	stdin, stdout := startPiped(t, cmd)
	stderrW.Close()
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()

	// Hundreds of log lines of ~1 KB are more than the pipe (64 KiB) and the
	// agent's log queue (256 KiB) hold. The deadline only ends a test whose
	// agent froze.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	editor := fakeeditor.Connect(stdin, stdout, fakeeditor.Options{})
	if _, err := editor.Initialize(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	// One log line per request: the quick loop's 800 (over 650 KB) overflow
	// both twice over.
	requests := stress.Size(t, 800, 4000)
	for i := range requests {
		if _, err := editor.Conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}}); err != nil {
			t.Fatalf("session/new %d of %d: %v (the agent froze on its stderr?)", i+1, requests, err)
		}
	}

	stdin.Close()
	logs, err := io.ReadAll(stderrR)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("agent exit: %v", err)
	}
	dropped := 0
	for _, m := range regexp.MustCompile(`dropped (\d+) log lines`).FindAllSubmatch(logs, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		dropped += n
	}
	logged := len(regexp.MustCompile(`msg=session/new`).FindAll(logs, -1))
	if dropped == 0 || logged+dropped < requests {
		t.Errorf("%d session/new lines logged, %d reported dropped; want drops reported and all %d accounted for", logged, dropped, requests)
	}
	t.Logf("%d requests answered; %d session/new lines logged, %d log lines dropped", requests, logged, dropped)
}
