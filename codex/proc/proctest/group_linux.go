package proctest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// GroupMembers lists the live processes (not zombies) of process group pgid.
func GroupMembers(pgid int) []int {
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

// CheckGroupDiesWithAgent starts agent (a test binary run as an agent that
// starts a child and prints "<word> PID"), SIGKILLs it, and requires the
// child's process group, its watchdog included, to end within 5 s.
func CheckGroupDiesWithAgent(t testing.TB, agent *exec.Cmd, word, name string) {
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
	if len(GroupMembers(pid)) < 2 {
		t.Errorf("%s's process group has no watchdog: %v", name, GroupMembers(pid))
	}
	agent.Process.Kill()
	agent.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for len(GroupMembers(pid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := GroupMembers(pid); len(left) > 0 {
		syscall.Kill(-pid, syscall.SIGKILL)
		t.Errorf("%s's process group outlived the agent: %v", name, left)
	}
}
