//go:build unix

package proc

import (
	"bufio"
	"log/slog"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestWatchdogSignalScript runs here the watchdog of the platforms without a
// parent-death signal (macOS, the BSDs): once the agent is gone it sends
// codex that signal itself, and kills the group if codex ignores it.
func TestWatchdogSignalScript(t *testing.T) {
	for _, tt := range []struct {
		name, script string
		want         syscall.Signal
	}{
		{"exits on SIGINT", `echo ready; exec sleep 60`, syscall.SIGINT},
		{"ignores SIGINT", `trap '' INT; echo ready; sleep 60 & wait`, syscall.SIGKILL},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			codex := exec.Command("/bin/sh", "-c", tt.script)
			codex.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			out, err := codex.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := codex.Start(); err != nil {
				t.Fatal(err)
			}
			pid := codex.Process.Pid
			t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
			w := runWatchdog(watchdogSignalScript, pid, syscall.SIGINT, 200*time.Millisecond, slog.New(slog.DiscardHandler))
			if w == nil {
				t.Fatal("no watchdog")
			}
			if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
				t.Fatalf("codex said %q", line)
			}

			w.hold.Close() // the agent is gone
			start := time.Now()
			codex.Wait()
			ws, _ := codex.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != tt.want {
				t.Errorf("codex ended with %v after %v; want killed by %v", codex.ProcessState, time.Since(start), tt.want)
			}
			done := make(chan struct{})
			go func() { w.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("the watchdog outlived codex")
			}
		})
	}
}
