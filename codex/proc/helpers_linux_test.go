package proc

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid runs (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !bytes.HasPrefix(b[bytes.LastIndexByte(b, ')')+1:], []byte(" Z"))
}

// waitGone waits up to 5 s for pid to end, then kills it and fails.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d still runs", pid)
}
