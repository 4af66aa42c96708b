//go:build linux

package e2e_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// An agent that dies without a chance to clean up (SIGKILL: an editor crash,
// the OOM killer) takes codex, its sandbox, the command it runs and what
// that command started with it.
func TestAgentKilledMidCommandLeavesNoProcesses(t *testing.T) {
	eachBackend(t, testAgentKilledMidCommandLeavesNoProcesses)
}

func testAgentKilledMidCommandLeavesNoProcesses(t *testing.T, backend string) {
	for _, tt := range []struct{ name, mode, command, marker string }{
		// No sandbox: the shell is codex's own child.
		{"full-access", "full-access", "sleep 301.4321", "301.4321"},
		// The sleep is the shell's child, which a SIGKILLed codex leaves
		// running: codex has to end its commands itself.
		{"full-access compound", "full-access", "sleep 303.4321; echo done", "303.4321"},
		{"full-access ignoring SIGTERM", "full-access", "trap '' TERM HUP INT; sleep 304.4321; echo done", "304.4321"},
		// workspace-write: the command runs inside codex's sandbox (bwrap).
		{"auto", "auto", "sleep 302.4321", "302.4321"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := start(t, setup{backend: backend, fs: true, mode: tt.mode})
			e.mock.Enqueue(mockapi.Reply(mockapi.ExecCommand("call_sleep", tt.command)))
			done := make(chan error, 1)
			go func() {
				_, err := e.prompt("sleep")
				done <- err
			}()
			if err := e.editor.WaitForUpdate(e.ctx, func(u acpsdk.SessionUpdate) bool {
				return u.ToolCall != nil && u.ToolCall.Kind == acpsdk.ToolKindExecute
			}); err != nil {
				t.Fatalf("no tool call for the command: %v", err)
			}
			var tree []proc
			if !eventually(10*time.Second, func() bool {
				tree = descendants(e.agentPID)
				return slices.ContainsFunc(tree, func(p proc) bool { return p.cmdline == "sleep "+tt.marker })
			}) {
				t.Fatalf("the command never ran among the agent's descendants:\n%s", procList(tree))
			}
			if err := syscall.Kill(e.agentPID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-done // the connection breaks with the agent
			left := func() []string {
				var out []string
				for _, p := range tree {
					if p.alive() {
						out = append(out, p.String())
					}
				}
				return out
			}
			// The kernel delivers the death signals at once; 2 s is for the
			// processes to act on them on a loaded machine.
			if !eventually(2*time.Second+500*time.Millisecond, func() bool { return len(left()) == 0 }) {
				stillThere := left()
				for _, p := range tree {
					if p.alive() {
						syscall.Kill(p.pid, syscall.SIGKILL)
					}
				}
				t.Errorf("%d of the agent's %d descendant processes outlived it:\n%s\nthe tree was:\n%s",
					len(stillThere), len(tree), strings.Join(stillThere, "\n"), procList(tree))
			}
		})
	}
}

// Codex killed from outside mid-turn (the OOM killer, a user) fails the
// prompt with the signal, not with the unrelated warning it printed last.
func TestCodexKilledBySignalNamesIt(t *testing.T) {
	codex := filepath.Join(t.TempDir(), "codex")
	script := `#!/bin/sh
[ "$1" = exec ] || exit 1 # no model catalog: the agent goes on without one
cat >/dev/null
echo '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}'
echo "WARNING: proceeding, even though we could not update PATH" >&2
kill -KILL $$
`
	if err := os.WriteFile(codex, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e := start(t, setup{backend: "exec", fs: true, codexPath: codex})
	_, err := e.prompt("hi")
	var re *acpsdk.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a JSON-RPC error", err)
	}
	if !strings.Contains(re.Message, "killed by signal SIGKILL") || strings.Contains(re.Message, "WARNING") {
		t.Errorf("message = %q, want the signal and not the warning", re.Message)
	}
}

// proc is one process, identified by pid and start time (pids are reused).
type proc struct {
	pid     int
	start   string // field 22 of /proc/<pid>/stat
	cmdline string
}

func (p proc) String() string {
	cmd := strings.Join(strings.Fields(p.cmdline), " ")
	if len(cmd) > 160 {
		cmd = cmd[:160] + "..."
	}
	return strconv.Itoa(p.pid) + ": " + cmd
}

func procList(ps []proc) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintln(&b, p)
	}
	return b.String()
}

// alive reports whether p still runs: present, the same process, not a zombie.
func (p proc) alive() bool {
	state, _, start, ok := readStat(p.pid)
	return ok && start == p.start && state != "Z"
}

// readStat returns a process's state, parent and start time.
func readStat(pid int) (state string, ppid int, start string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, "", false
	}
	// pid (comm) state ppid ...; comm may contain spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", 0, "", false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", 0, "", false
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0], ppid, f[19], true
}

// descendants lists the live processes below pid.
func descendants(pid int) []proc {
	children := map[int][]proc{}
	entries, _ := os.ReadDir("/proc")
	for _, ent := range entries {
		n, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		state, ppid, start, ok := readStat(n)
		if !ok || state == "Z" {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + ent.Name() + "/cmdline")
		children[ppid] = append(children[ppid], proc{n, start, strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))})
	}
	var out []proc
	queue := []int{pid}
	for len(queue) > 0 {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
		queue = queue[1:]
	}
	return out
}
