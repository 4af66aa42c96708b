package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// startScript starts sh -c script in a process group of its own, killed
// with the test, and returns it with the first n lines it prints.
func startScript(t *testing.T, script string, n int) (root *exec.Cmd, lines []string) {
	t.Helper()
	root = exec.Command("sh", "-c", script)
	root.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := root.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := root.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-root.Process.Pid, syscall.SIGKILL); root.Wait() })
	sc := bufio.NewScanner(out)
	for len(lines) < n && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != n {
		t.Fatalf("the shell printed %q, want %d lines", lines, n)
	}
	return root, lines
}

// startTree starts a shell with a child and a grandchild below it (all
// sleeping), and returns the shell and the pids of the three.
func startTree(t *testing.T) (root *exec.Cmd, pids []int) {
	t.Helper()
	root, lines := startScript(t, `
sleep 60 & echo $!
sh -c 'sleep 60 & echo $!; wait' & echo $!
wait`, 3)
	for _, line := range lines {
		pid, err := strconv.Atoi(strings.TrimSpace(line))
		if err != nil {
			t.Fatalf("the shell printed %q", line)
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return root, pids
}

func pidsOf(ps []procInfo) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.pid)
	}
	slices.Sort(out)
	return out
}

// The processes below one are found without reading the stat of every
// process on the machine: that scan was a tenth of a short session's CPU
// time on a loaded machine, once per app-server the agent closed.
func TestDescendantsReadOnlyTheTree(t *testing.T) {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d/children", os.Getpid(), os.Getpid())); err != nil {
		t.Skip("this kernel has no /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN)")
	}
	root, pids := startTree(t)
	var stats []string
	readProc = func(name string) ([]byte, error) {
		if strings.HasSuffix(name, "/stat") {
			stats = append(stats, name)
		}
		return os.ReadFile(name)
	}
	t.Cleanup(func() { readProc = os.ReadFile })

	if got := pidsOf(descendantsOf(root.Process.Pid)); !slices.Equal(got, pids) {
		t.Errorf("descendantsOf = %v, want %v", got, pids)
	}
	for _, name := range stats {
		below := false
		for _, pid := range pids {
			below = below || name == fmt.Sprintf("/proc/%d/stat", pid)
		}
		if !below {
			t.Errorf("read %s, not a process below the root", name)
		}
	}
}

// Both ways of finding the processes below one agree.
func TestDescendantsByChildrenMatchesScan(t *testing.T) {
	root, pids := startTree(t)
	byScan := pidsOf(descendantsByScan(root.Process.Pid))
	if !slices.Equal(byScan, pids) {
		t.Errorf("descendantsByScan = %v, want %v", byScan, pids)
	}
	byChildren, ok := descendantsByChildren(root.Process.Pid)
	if !ok {
		t.Skip("this kernel has no /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN)")
	}
	if got := pidsOf(byChildren); !slices.Equal(got, pids) {
		t.Errorf("descendantsByChildren = %v, want %v", got, pids)
	}
	if _, ok := descendantsByChildren(1 << 30); ok {
		t.Error("descendantsByChildren of no process reported a walk")
	}
}
