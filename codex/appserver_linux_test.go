package codex

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestAppServerDiesWithAgent: an agent killed without cleaning up takes the
// app-server's process group with it (parent-death SIGINT, then the
// watchdog), and OS threads that end meanwhile do not.
func TestAppServerDiesWithAgent(t *testing.T) {
	for _, mode := range []string{"", "ignore-eof"} { // the latter also ignores SIGINT
		t.Run("mode "+mode, func(t *testing.T) {
			agent := exec.Command(os.Args[0], "-test.run=^$")
			agent.Env = append(os.Environ(), appServerAgentEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
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
			if _, err := fmt.Fscanf(out, "app-server %d\n", &pid); err != nil {
				t.Fatalf("the agent did not report its app-server: %v", err)
			}
			if len(groupMembers(pid)) < 2 {
				t.Errorf("the app-server's process group has no watchdog: %v", groupMembers(pid))
			}
			agent.Process.Kill()
			agent.Wait()
			deadline := time.Now().Add(5 * time.Second)
			for len(groupMembers(pid)) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if left := groupMembers(pid); len(left) > 0 {
				syscall.Kill(-pid, syscall.SIGKILL)
				t.Errorf("the app-server's process group outlived the agent: %v", left)
			}
		})
	}
}
