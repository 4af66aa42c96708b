package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// KillTagged SIGKILLs every process below root (descendants, any depth)
// whose environment holds kv ("KEY=VALUE"), killing its whole process group
// when that group is not root's own; it returns how many tagged processes it
// signalled. codex app-server starts each command of a turn in a process
// group of its own, with the thread's shell_environment_policy.set in its
// environment, and leaves them running when a turn is interrupted: a tag
// there finds them. The environment is the one each process was started
// with (/proc/PID/environ).
func KillTagged(root int, kv string) (int, error) {
	if root <= 1 || !strings.Contains(kv, "=") || strings.HasPrefix(kv, "=") {
		return 0, fmt.Errorf("codex: KillTagged(%d, %q): invalid arguments", root, kv)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(root)); err != nil {
		return 0, fmt.Errorf("codex: KillTagged: %w", err)
	}
	tag := []byte(kv)
	return killBelow(root, func(pid int) envMatch { return envHas(pid, tag) }), nil
}

// KillTaggedAnywhere is KillTagged over every process this user can see:
// for the commands of an app-server that died, which were reparented away
// from it. kv must be unique to the processes it is meant for (a session's
// random id); it returns how many tagged processes it signalled.
func KillTaggedAnywhere(kv string) (int, error) {
	if !strings.Contains(kv, "=") || strings.HasPrefix(kv, "=") {
		return 0, fmt.Errorf("codex: KillTaggedAnywhere(%q): invalid argument", kv)
	}
	tag := []byte(kv)
	self := os.Getpid()
	return killBelow(1, func(pid int) envMatch {
		if pid == self {
			return envNo
		}
		return envHas(pid, tag)
	}), nil
}

// procInfo is what /proc/PID/stat tells of a process.
type procInfo struct {
	pid, ppid, pgid int
	start           uint64 // clock ticks after boot: with pid, names one process
	zombie          bool
}

// readProc reads a file of /proc; tests count what a walk reads.
var readProc = os.ReadFile

// readStat reads /proc/PID/stat.
func readStat(pid int) (procInfo, bool) {
	b, err := readProc("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	// pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice num_threads
	// itrealvalue starttime ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, start: start, zombie: f[0] == "Z"}, true
}

// descendantsOf lists the live processes below root, parents before
// children. Below a process other than init it follows each process's
// children (/proc/PID/task/TID/children), reading the stat of those alone:
// scanning every process of the machine, as it did, cost a loaded machine's
// agent a tenth of its CPU time over a short session, once per app-server
// it closed. Both are snapshots that miss what starts meanwhile (hence
// killBelow's rounds, and KillTree's freeze).
func descendantsOf(root int) []procInfo {
	if root > 1 {
		if out, ok := descendantsByChildren(root); ok {
			return out
		}
	}
	return descendantsByScan(root)
}

// descendantsByChildren walks down from root by the children files of its
// threads; ok is false where the kernel has none (CONFIG_PROC_CHILDREN).
func descendantsByChildren(root int) (out []procInfo, ok bool) {
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		children, ok := childrenOf(pid)
		if !ok {
			if pid == root {
				return nil, false
			}
			continue // gone meanwhile
		}
		for _, c := range children {
			p, ok := readStat(c)
			if !ok {
				continue // gone meanwhile
			}
			if !p.zombie {
				out = append(out, p)
			}
			queue = append(queue, c)
		}
	}
	return out, true
}

// childrenOf lists pid's children, from the children file of each of its
// threads (a child belongs to the thread that started it). ok is false when
// pid's first thread has no children file: pid is gone, or the kernel
// offers none.
func childrenOf(pid int) (children []int, ok bool) {
	task := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(task)
	if err != nil {
		return nil, false
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	main := strconv.Itoa(pid)
	for _, tid := range tids {
		b, err := readProc(task + "/" + tid + "/children")
		if err != nil {
			if tid == main {
				return nil, false
			}
			continue // the thread ended
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				children = append(children, c)
			}
		}
	}
	return children, true
}

// descendantsByScan reads the stat of every process to find those below
// root: for init, below which everything is, and kernels without children
// files.
func descendantsByScan(root int) []procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	children := make(map[int][]procInfo)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if p, ok := readStat(pid); ok {
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	var out []procInfo
	queue := []int{root}
	for len(queue) > 0 {
		for _, p := range children[queue[0]] {
			if !p.zombie {
				out = append(out, p)
			}
			queue = append(queue, p.pid) // a zombie's children are still below root
		}
		queue = queue[1:]
	}
	return out
}

// envMatch is what a process's environment says about a tag.
type envMatch int

const (
	envNo      envMatch = iota
	envYes              // the tag is there
	envUnknown          // nothing to read: the process may be inside execve
)

// envHas reports whether the environment pid started with holds kv. A
// process in the middle of execve shows an empty environment for a moment,
// as does one started with none; both are envUnknown, to look at again.
func envHas(pid int, kv []byte) envMatch {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return envNo // gone, or not ours to read
	}
	if len(b) == 0 {
		return envUnknown
	}
	for entry := range bytes.SplitSeq(b, []byte{0}) {
		if bytes.Equal(entry, kv) {
			return envYes
		}
	}
	return envNo
}

// killBelow SIGKILLs the processes below root that match (all when match is
// nil), each with its process group unless that is root's or ours. Rounds
// catch what they started meanwhile in groups of their own, and look again,
// briefly, at processes whose environment could not be read yet (caught
// inside execve) — even once killing their parent moved them away from
// root. It returns how many matching processes it signalled.
func killBelow(root int, match func(pid int) envMatch) int {
	rootInfo, ok := readStat(root)
	if !ok {
		return 0
	}
	signalled := make(map[int]bool)
	var pending []procInfo // unknown in the last round
	// A process stays inside execve for well under a millisecond unless the
	// machine is loaded; 20 rounds 2 ms apart bound the wait when one never
	// shows an environment.
	for round := 0; round < 20; round++ {
		candidates := descendantsOf(root)
		for _, p := range pending {
			if now, ok := readStat(p.pid); ok && now.start == p.start && !now.zombie {
				candidates = append(candidates, now)
			}
		}
		pending = pending[:0]
		found := false
		seen := make(map[int]bool, len(candidates))
		for _, p := range candidates {
			if signalled[p.pid] || seen[p.pid] {
				continue
			}
			seen[p.pid] = true
			if match != nil {
				switch match(p.pid) {
				case envNo:
					continue
				case envUnknown:
					pending = append(pending, p)
					continue
				}
			}
			found = true
			signalled[p.pid] = true
			killProc(p, rootInfo.pgid)
		}
		if len(pending) == 0 && (!found || round >= 2) {
			break
		}
		if len(pending) > 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	return len(signalled)
}

// killProc kills p's process group, or p alone when that group is rootGroup
// or ours.
func killProc(p procInfo, rootGroup int) {
	if p.pgid > 1 && p.pgid != rootGroup && p.pgid != syscall.Getpgrp() {
		if syscall.Kill(-p.pgid, syscall.SIGKILL) == nil {
			return
		}
	}
	syscall.Kill(p.pid, syscall.SIGKILL)
}

// Tree is a snapshot of the processes below one process.
type Tree []procInfo

// SnapshotBelow records the processes below root.
func SnapshotBelow(root int) Tree { return descendantsOf(root) }

// Kill SIGKILLs those processes of the snapshot that still run (same pid and
// start time), with their groups unless that is rootGroup's or ours, and
// returns how many it signalled.
func (t Tree) Kill(rootGroup int) int {
	n := 0
	for _, p := range t {
		if now, ok := readStat(p.pid); ok && now.start == p.start && !now.zombie {
			killProc(now, rootGroup)
			n++
		}
	}
	return n
}
