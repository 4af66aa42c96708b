package execrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
			checkGroupDiesWithAgent(t, agent, "codex", "codex")
		})
	}
}

// groupMembers lists the live processes (not zombies) of process group pgid.
func groupMembers(pgid int) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + ent.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
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
	r := &Runner{Path: codex}
	r.Run(context.Background(), Invocation{Cwd: dir}, func(line []byte) {
		pid := 0
		fmt.Sscanf(string(line), `{"pid":%d}`, &pid)
		fmt.Printf("codex %d\n", pid)
	})
}

// checkGroupDiesWithAgent starts agent (the test binary run as an agent
// that starts a child and prints "<word> PID"), SIGKILLs it, and requires
// the child's process group, its watchdog included, to end within 5 s.
func checkGroupDiesWithAgent(t *testing.T, agent *exec.Cmd, word, name string) {
	t.Helper()
	out, err := agent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	defer agent.Wait()
	defer agent.Process.Kill()
	pid := 0
	if _, err := fmt.Fscanf(out, word+" %d\n", &pid); err != nil {
		t.Fatalf("the agent did not report %s: %v", name, err)
	}
	if len(groupMembers(pid)) < 2 {
		t.Errorf("%s's process group has no watchdog: %v", name, groupMembers(pid))
	}
	agent.Process.Kill()
	agent.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for len(groupMembers(pid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := groupMembers(pid); len(left) > 0 {
		syscall.Kill(-pid, syscall.SIGKILL)
		t.Errorf("%s's process group outlived the agent: %v", name, left)
	}
}
