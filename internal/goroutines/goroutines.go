// Package goroutines finds the goroutines a piece of code left behind, by
// their stacks and without waiting, for leak checks in tests.
//
// Comparing runtime.NumGoroutine before and after counts every goroutine of
// the process (the runtime's finalizer goroutine closing a collected file,
// net/http's idle connections, other tests' leftovers) and counts a goroutine
// that has already done its last signal (a WaitGroup.Done, a close) but not
// yet returned; a check built on it has to sleep and hope. Here a leak is a
// goroutine that did not exist at the snapshot, runs code the caller names,
// and is blocked (on a channel, a lock, I/O, a syscall, a timer): one that
// would stay if nothing woke it. A goroutine that is running or runnable is
// on its way somewhere — the one that has signalled its end and is returning
// among them — and is not reported, so the check needs no sleep. (A leaked
// goroutine caught between two blocking waits would be missed; it is
// blocked nearly all the time, so a test that runs the code several times
// sees it.)
package goroutines

import (
	"runtime"
	"strconv"
	"strings"
)

// Goroutine is one goroutine as runtime.Stack shows it.
type Goroutine struct {
	ID    uint64
	State string // "chan receive", "select", "IO wait", "running", …; without ", 2 minutes" or ", locked to thread"
	Stack string // the whole record, header line first
}

// Blocked reports whether g waits for something that may never come: any
// wait but the scheduler's and the garbage collector's transient ones.
func (g Goroutine) Blocked() bool {
	switch g.State {
	case "", "running", "runnable", "idle", "dead", "copystack", "preempted", "syscall (running)":
		return false
	}
	for _, transient := range []string{"GC ", "garbage collection", "stopping the world", "preempted", "flushing proc caches"} {
		if strings.Contains(g.State, transient) {
			return false
		}
	}
	return true
}

// All returns every goroutine of the process.
func All() []Goroutine {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return parse(string(buf[:n]))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// parse splits runtime.Stack's output into goroutines.
func parse(dump string) []Goroutine {
	var out []Goroutine
	for record := range strings.SplitSeq(strings.TrimSpace(dump), "\n\n") {
		header, _, _ := strings.Cut(record, "\n")
		rest, ok := strings.CutPrefix(header, "goroutine ")
		if !ok {
			continue
		}
		idText, rest, _ := strings.Cut(rest, " ")
		id, err := strconv.ParseUint(idText, 10, 64)
		if err != nil {
			continue
		}
		g := Goroutine{ID: id, Stack: record}
		if i, j := strings.IndexByte(rest, '['), strings.LastIndexByte(rest, ']'); i >= 0 && j > i {
			g.State, _, _ = strings.Cut(rest[i+1:j], ",")
		}
		out = append(out, g)
	}
	return out
}

// Snapshot is the set of goroutines alive at one moment.
type Snapshot map[uint64]bool

// Take records the goroutines alive now.
func Take() Snapshot {
	s := Snapshot{}
	for _, g := range All() {
		s[g.ID] = true
	}
	return s
}

// Leaked returns the goroutines started since s that are blocked and whose
// stacks mention code (a substring of a function's full name, such as
// "github.com/codexacp/codexacp/codex."; the "created by" line counts).
// Goroutine ids are never reused, so nothing that existed at s is reported.
func (s Snapshot) Leaked(code string) []Goroutine {
	var out []Goroutine
	for _, g := range All() {
		if !s[g.ID] && g.Blocked() && strings.Contains(g.Stack, code) {
			out = append(out, g)
		}
	}
	return out
}

// Stacks joins the stacks of gs for a test failure message.
func Stacks(gs []Goroutine) string {
	stacks := make([]string, len(gs))
	for i, g := range gs {
		stacks[i] = g.Stack
	}
	return strings.Join(stacks, "\n\n")
}
