package execrun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/codexacp/codexacp/codex/proc/proctest"
)

// TestRunCodexSurvivesThreadExits: codex's parent-death signal is tied to
// the OS thread that started it; threads that Go ends while codex runs
// (here: those of goroutines that exit locked to them) must not kill it.
func TestRunCodexSurvivesThreadExits(t *testing.T) {
	r := &Runner{Path: fakeCodex(t, `
trap 'kill $s; echo "{\"n\":2}"; exit 0' USR1
sleep 60 & s=$!
echo "{\"pid\":$$}"
wait
`)}
	var lines []string
	err := r.Run(context.Background(), Invocation{Cwd: t.TempDir()}, func(line []byte) {
		lines = append(lines, string(line))
		pid := 0
		if _, err := fmt.Sscanf(string(line), `{"pid":%d}`, &pid); err != nil {
			return
		}
		for range 100 {
			done := make(chan struct{})
			go func() {
				runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
				close(done)
			}()
			<-done
		}
		syscall.Kill(pid, syscall.SIGUSR1) // codex may answer now
	})
	if err != nil || len(lines) != 2 {
		t.Errorf("Run = %v, lines %q; want codex to finish normally", err, lines)
	}
}

// TestRunCodexDiesWithAgent: an agent killed without a chance to clean up
// takes codex and its process group with it: codex gets SIGINT, and the
// watchdog kills the group if codex ignores that.
func TestRunCodexDiesWithAgent(t *testing.T) {
	for _, tt := range []struct{ name, script string }{
		{"exits on SIGINT", `echo "{\"pid\":$$}"; exec sleep 60`},
		{"ignores SIGINT", `trap '' INT; sleep 60 & echo "{\"pid\":$$}"; exec sleep 60`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			agent := exec.Command(os.Args[0], "-test.run=^TestHelperAgent$")
			agent.Env = append(os.Environ(), helperAgentEnv+"="+dir, helperCodexEnv+"="+tt.script)
			proctest.CheckGroupDiesWithAgent(t, agent, "codex", "codex")
		})
	}
}

const (
	helperAgentEnv = "CODEXACP_TEST_HELPER_AGENT"
	helperCodexEnv = "CODEXACP_TEST_HELPER_CODEX"
)

// TestHelperAgent is the agent process of TestRunCodexDiesWithAgent: it runs
// a codex that never ends and reports its pid on stdout.
func TestHelperAgent(t *testing.T) {
	dir := os.Getenv(helperAgentEnv)
	if dir == "" {
		t.Skip("helper process")
	}
	// Not in t.TempDir: this process is killed before its cleanups run.
	codex := filepath.Join(dir, "codex")
	if err := os.WriteFile(codex, []byte("#!/bin/sh\n"+os.Getenv(helperCodexEnv)+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Path: codex, Grace: 200 * time.Millisecond} // the watchdog's too
	r.Run(context.Background(), Invocation{Cwd: dir}, func(line []byte) {
		pid := 0
		fmt.Sscanf(string(line), `{"pid":%d}`, &pid)
		fmt.Printf("codex %d\n", pid)
	})
}
