// Package proctest checks processes for the tests of the packages that
// start codex (codex/proc, codex/execrun, codex/appserver): whether a pid
// still runs, a bounded wait for it to end, and on Linux the members of a
// process group and that a group ends with the agent that started it. It
// reads /proc; where there is none, no process is seen running.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"
)

// Alive reports whether pid runs (not a zombie).
func Alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !bytes.HasPrefix(b[bytes.LastIndexByte(b, ')')+1:], []byte(" Z"))
}

// WaitGone waits up to 5 s for pid to end (or be a zombie nobody reaped),
// then kills it and fails the test.
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !Alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
	t.Errorf("process %d still runs", pid)
}
