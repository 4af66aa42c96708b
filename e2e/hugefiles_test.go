//go:build linux

package e2e_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// peakRSS is the agent's peak resident memory in bytes (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// alive fails the test if the agent process has exited.
func alive(t *testing.T, e *env) {
	t.Helper()
	if err := syscall.Kill(e.agentPID, 0); err != nil {
		t.Fatalf("the agent is gone: %v\n%s", err, e.stderr.String())
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("still here")))
	if r := e.mustPrompt("still there?"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("next prompt: stopReason = %q", r.StopReason)
	}
}

// The model's shell makes a 64 GiB sparse log (auto mode's sandbox lets it
// write the workspace) and reads its first line with read_text_file: the
// tool answers with the line, and the agent lives, its memory flat. It used
// to read the whole file and die.
func TestModelReadsHugeSparseFile(t *testing.T) { eachBackend(t, testModelReadsHugeSparseFile) }

func testModelReadsHugeSparseFile(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, mode: "auto"}) // no editor fs: the disk route
	big := filepath.Join(e.cwd, "big.log")
	e.mock.Enqueue(
		mockapi.Reply(mockapi.ExecCommand("call_truncate", "printf 'first line\\n' > big.log && truncate -s 64G big.log")),
		mockapi.Reply(acpCall(t, "call_read", "read_text_file", map[string]any{"path": big, "limit": 1})),
		mockapi.Reply(mockapi.Message("read it")),
	)
	if r := e.mustPrompt("make a big log and read it"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason = %q", r.StopReason)
	}
	if fi, err := os.Stat(big); err != nil || fi.Size() != 64<<30 {
		t.Fatalf("the shell did not make the file: %v", err)
	}
	out := toolOutput(t, e, "call_read")
	for _, s := range []string{`"content":"first line\n"`, `"has_more":true`, `"hash":""`, "over the 8 MiB"} {
		if !strings.Contains(out, s) {
			t.Errorf("model output lacks %q: %s", s, out)
		}
	}
	peak := peakRSS(t, e.agentPID)
	t.Logf("agent peak RSS %.1f MB", float64(peak)/1e6)
	if peak > 100<<20 {
		t.Errorf("agent peak RSS %d bytes, want under 100 MiB", peak)
	}
	alive(t, e)
}

// edit_text_file replacing each of 1 Mi "a" in a 1 MiB file by 64 KiB
// (64 GiB in all), in read-only mode: a clear tool error naming the limit,
// no permission question, nothing written, and the agent lives. The result
// used to be built before the mode was checked, and the agent died.
func TestEditAmplificationReadOnly(t *testing.T) { eachBackend(t, testEditAmplificationReadOnly) }

func testEditAmplificationReadOnly(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, mode: "read-only"})
	content := strings.Repeat("a", 1<<20)
	path := e.writeFile("a.txt", content)
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "call_edit", "edit_text_file", map[string]any{"path": path, "old_string": "a",
			"new_string": strings.Repeat("b", 64<<10), "expected_replacements": 1 << 20})),
		mockapi.Reply(mockapi.Message("tried")),
	)
	if r := e.mustPrompt("grow it"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason = %q", r.StopReason)
	}
	out := toolOutput(t, e, "call_edit")
	for _, s := range []string{"-32007", "Result too large", "limit 8 MiB"} {
		if !strings.Contains(out, s) {
			t.Errorf("model output lacks %q: %.600s", s, out)
		}
	}
	if n := len(permissionRequests(e)); n != 0 {
		t.Errorf("%d permission questions", n)
	}
	if got := readDisk(t, path); got != content {
		t.Error("the file changed")
	}
	alive(t, e)
}
