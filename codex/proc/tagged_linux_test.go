package proc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/codexacp/codexacp/codex/proc/proctest"
)

func TestKillTagged(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	// root: a tagged process in a group of its own, a tagged shell in root's
	// group with a tagged grandchild, one with another tag, an untagged one,
	// one with no environment at all (looked at again, briefly, as one
	// caught inside execve would be, then left alone).
	root, lines := startScript(t, `
TAG=a setsid sleep 60 & echo own $!
TAG=a sh -c 'sleep 60 & echo grandchild $!; wait' & echo shell $!
TAG=b sleep 60 & echo other $!
sleep 60 & echo untagged $!
env -i sleep 60 & echo empty $!
wait`, 6)
	// A tagged process not below root.
	outside := exec.Command("sleep", "60")
	outside.Env = append(os.Environ(), "TAG=a")
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	defer outside.Wait()
	defer outside.Process.Kill()

	pids := map[string]int{}
	for _, line := range lines {
		var name string
		var pid int
		fmt.Sscan(line, &name, &pid)
		pids[name] = pid
	}
	if len(pids) != 6 {
		t.Fatalf("root reported %v", pids)
	}
	defer syscall.Kill(-pids["own"], syscall.SIGKILL)
	rootCmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", root.Process.Pid))
	for _, pid := range pids {
		waitExec(t, pid, string(rootCmdline)) // each runs with its own environment
	}

	n, err := KillTagged(root.Process.Pid, "TAG=a")
	if err != nil || n != 3 {
		t.Errorf("KillTagged = %d, %v; want 3 (own, shell, grandchild)", n, err)
	}
	for _, name := range []string{"own", "shell", "grandchild"} {
		proctest.WaitGone(t, pids[name])
	}
	// Were they signalled, they would be gone by now.
	survivors := map[string]int{"other": pids["other"], "untagged": pids["untagged"], "empty": pids["empty"],
		"root": root.Process.Pid, "outside": outside.Process.Pid}
	for name, pid := range survivors {
		if !proctest.Alive(pid) {
			t.Errorf("%s (%d) was killed", name, pid)
		}
	}
	if n, err := KillTagged(root.Process.Pid, "TAG=a"); n != 0 || err != nil {
		t.Errorf("second KillTagged = %d, %v; want 0, nil", n, err)
	}
}

// waitExec waits until pid, forked by the root shell, has exec'd: until
// then its environment is the root's.
func waitExec(t *testing.T, pid int, rootCmdline string) {
	t.Helper()
	for range 500 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if len(b) > 0 && string(b) != rootCmdline {
			return
		}
		syscall.Nanosleep(&syscall.Timespec{Nsec: 10e6}, nil)
	}
	t.Fatalf("process %d did not start", pid)
}

func TestKillTaggedArguments(t *testing.T) {
	tests := []struct {
		name string
		root int
		kv   string
	}{
		{"no value", os.Getpid(), "TAG"},
		{"no key", os.Getpid(), "=a"},
		{"init", 1, "TAG=a"},
		{"no such process", 1 << 30, "TAG=a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n, err := KillTagged(tt.root, tt.kv); err == nil || n != 0 {
				t.Errorf("KillTagged(%d, %q) = %d, %v; want an error", tt.root, tt.kv, n, err)
			}
		})
	}
}

// KillTaggedAnywhere finds tagged processes wherever they were reparented.
func TestKillTaggedAnywhere(t *testing.T) {
	tag := fmt.Sprintf("CODEXACP_TEST_TAG=%d-%d", os.Getpid(), time.Now().UnixNano())
	start := func(env string) *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.Env = append(os.Environ(), env)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	tagged, other := start(tag), start(tag+"-other")
	for _, c := range []struct {
		pid int
		kv  string
	}{{tagged.Process.Pid, tag}, {other.Process.Pid, tag + "-other"}} {
		for i := 0; envHas(c.pid, []byte(c.kv)) != envYes; i++ { // until it has exec'd
			if i == 500 {
				t.Fatalf("%d never got its environment", c.pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if n, err := KillTaggedAnywhere(tag); err != nil || n != 1 {
		t.Errorf("KillTaggedAnywhere = %d, %v; want 1", n, err)
	}
	if err := tagged.Wait(); err == nil {
		t.Error("the tagged process was not killed")
	}
	if !proctest.Alive(other.Process.Pid) {
		t.Error("a process with another tag was killed")
	}
	if _, err := KillTaggedAnywhere("TAG"); err == nil {
		t.Error("a tag without a value was accepted")
	}
}
