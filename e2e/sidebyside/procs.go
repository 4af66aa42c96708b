//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procStat is what one /proc/PID/stat says about a process.
type procStat struct {
	pid, ppid int
	state     string // R, S, Z, …
	start     string // start time in clock ticks since boot: tells a reused pid apart
}

// readStat parses /proc/PID/stat (the command name may hold spaces and
// parentheses, so fields are counted from the last ')').
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return procStat{}, false
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return procStat{}, false
	}
	return procStat{pid: pid, ppid: ppid, state: fields[0], start: fields[19]}, true
}

// pids lists the live process ids.
func pids() []int {
	entries, _ := os.ReadDir("/proc")
	out := make([]int, 0, len(entries))
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// tree returns root and all its live descendants, leaving out children
// caught between fork and exec: such a child still shows its parent's
// command line and (vfork, posix_spawn) shares its memory, which would count
// the parent twice.
func tree(root int) []int {
	children := map[int][]int{}
	for _, pid := range pids() {
		if st, ok := readStat(pid); ok {
			children[st.ppid] = append(children[st.ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		parent := ""
		for _, c := range children[out[i]] {
			if parent == "" {
				parent = rawCmdline(out[i])
			}
			if rawCmdline(c) == parent {
				continue // not yet exec'd
			}
			out = append(out, c)
		}
	}
	return out
}

func rawCmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return string(b)
}

// statusKB reads a "Key:   N kB" line of /proc/PID/status.
func statusKB(pid int, key string) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// smapsRollup is what /proc/PID/smaps_rollup says of a process's memory,
// in KiB. Pss (proportional set size) charges each resident page to the
// processes mapping it in equal shares: the pages of a program file that
// several processes run (codex exec, codex app-server and
// codex-linux-sandbox are one binary) count once in a sum over them, where
// summed Rss counts them once per process.
type smapsRollup struct {
	Rss       int64
	Pss       int64
	PssAnon   int64 // Pss_Anon (Linux 5.8 and later; 0 before)
	PssFile   int64 // Pss_File (likewise)
	Anonymous int64
}

// parseSmapsRollup reads the "Key:   N kB" lines of smaps_rollup (the
// first line, the rolled-up address range, is not one); ok is false when
// Rss or Pss is missing.
func parseSmapsRollup(b []byte) (r smapsRollup, ok bool) {
	var haveRss, havePss bool
	for _, line := range strings.Split(string(b), "\n") {
		key, rest, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "Rss":
			r.Rss, haveRss = n, true
		case "Pss":
			r.Pss, havePss = n, true
		case "Pss_Anon":
			r.PssAnon = n
		case "Pss_File":
			r.PssFile = n
		case "Anonymous":
			r.Anonymous = n
		}
	}
	return r, haveRss && havePss
}

// readSmapsRollup reads /proc/PID/smaps_rollup (Linux 4.14 and later;
// reading another user's needs the right to trace it).
func readSmapsRollup(pid int) (smapsRollup, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return smapsRollup{}, false
	}
	return parseSmapsRollup(b)
}

// memSampler follows a process tree and keeps the peak of the root's own
// high-water mark (VmHWM, kept by the kernel), the peak of the summed
// VmRSS of the whole tree (sampled: shared pages count once per process)
// and the peak of its summed Pss (shared pages split between the processes
// mapping them).
type memSampler struct {
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	peaks memPeaks
	seen  map[int]string // every descendant seen: pid → command line
	// parts is the tree at its summed-VmRSS peak by process
	// (processLabel).
	parts map[string]memPart
}

// memPeaks are a sampler's peaks, in KiB.
type memPeaks struct {
	root    int64 // the root's VmHWM
	tree    int64 // summed VmRSS of the tree
	treePss int64 // summed Pss of the tree; 0 when smaps_rollup could not be read
	procs   int   // most processes seen in the tree at once
}

// memPart is what the processes of one label held at the tree's peak.
type memPart struct {
	KiB     int64 `json:"kib"`      // VmRSS
	AnonKiB int64 `json:"anon_kib"` // of which anonymous (heap, stacks); the rest is mapped files (the program's text) and shared memory
	PssKiB  int64 `json:"pss_kib"`  // Pss: its share of the pages it maps
	Procs   int   `json:"procs"`
}

// processLabel names a process for the memory breakdown: its program and,
// when the first argument is a subcommand (`codex app-server`, `codex
// exec`), that too.
func processLabel(pid int) string {
	args := strings.Split(strings.TrimRight(rawCmdline(pid), "\x00"), "\x00")
	if len(args) == 0 || args[0] == "" {
		return "(exited)" // between the listing and the read
	}
	label := filepath.Base(args[0])
	if len(args) > 1 && args[1] != "" && !strings.HasPrefix(args[1], "-") && !strings.Contains(args[1], "/") {
		label += " " + args[1]
	}
	return label
}

func startSampler(root int, every time.Duration) *memSampler {
	s := &memSampler{stop: make(chan struct{}), done: make(chan struct{}), seen: map[int]string{}}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			s.sample(root)
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *memSampler) sample(root int) {
	hwm, ok := statusKB(root, "VmHWM")
	if !ok {
		return // gone (or a zombie: no memory left)
	}
	members := tree(root)
	var sum, pss int64
	parts := map[string]memPart{}
	for _, pid := range members {
		if rss, ok := statusKB(pid, "VmRSS"); ok {
			sum += rss
			label := processLabel(pid)
			p := parts[label]
			p.KiB += rss
			anon, _ := statusKB(pid, "RssAnon")
			p.AnonKiB += anon
			if r, ok := readSmapsRollup(pid); ok {
				pss += r.Pss
				p.PssKiB += r.Pss
			}
			p.Procs++
			parts[label] = p
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sum > s.peaks.tree {
		s.parts = parts
	}
	for _, pid := range members[1:] {
		if _, ok := s.seen[pid]; !ok {
			s.seen[pid] = cmdline(pid)
		}
	}
	s.peaks.root = max(s.peaks.root, hwm)
	s.peaks.tree = max(s.peaks.tree, sum)
	s.peaks.treePss = max(s.peaks.treePss, pss)
	s.peaks.procs = max(s.peaks.procs, len(members))
}

// Stop takes a last sample and ends the sampler; it returns the peaks.
func (s *memSampler) Stop(root int) memPeaks {
	close(s.stop)
	<-s.done
	s.sample(root)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peaks
}

// Parts returns the tree at its summed-VmRSS peak by process label.
func (s *memSampler) Parts() map[string]memPart {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.parts
}

// Seen returns the command lines of the descendants the sampler saw.
func (s *memSampler) Seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.seen))
	for pid, c := range s.seen {
		if len(c) > 160 {
			c = c[:160] + "…"
		}
		out = append(out, strconv.Itoa(pid)+": "+c)
	}
	slices.Sort(out)
	return out
}

// processesWithEnv lists live processes whose environment holds a variable
// for which match is true.
func processesWithEnv(match func(kv string) bool) []int {
	var found []int
	for _, pid := range pids() {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
		if err != nil {
			continue
		}
		for _, v := range bytes.Split(b, []byte{0}) {
			if match(string(v)) {
				found = append(found, pid)
				break
			}
		}
	}
	return found
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// reapLeftovers finds processes still carrying a marker variable that match
// accepts, kills each by its id and reports them.
func reapLeftovers(match func(kv string) bool) []string {
	var left []string
	for _, pid := range processesWithEnv(match) {
		if pid == os.Getpid() {
			continue
		}
		left = append(left, strconv.Itoa(pid)+": "+cmdline(pid))
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return left
}

// snapshot records the live descendants of root (not root itself), so that
// survivors can be told apart from reused pids later.
func snapshot(root int) map[int]string {
	out := map[int]string{}
	for _, pid := range tree(root)[1:] {
		if st, ok := readStat(pid); ok {
			out[pid] = st.start
		}
	}
	return out
}

// survivors kills, each by its id, the processes of snap that still run,
// and reports them.
func survivors(snap map[int]string) []string {
	var left []string
	for pid, start := range snap {
		st, ok := readStat(pid)
		if !ok || st.start != start || st.state == "Z" {
			continue
		}
		left = append(left, strconv.Itoa(pid)+": "+cmdline(pid))
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return left
}
