// Package recovery keeps a bug in one piece of work from taking the whole
// agent down, the way net/http keeps serving when a handler panics: a panic
// in a request handler, a prompt turn, a tool call or a background refresh
// is stopped at the boundary that owns the goroutine, logged once with its
// stack, and becomes an error for that piece of work alone (the request's
// -32603, the turn's error), while every other session goes on.
//
// Each goroutine boundary defers [Recover] directly:
//
//	go func() {
//		defer recovery.Recover(log, "skills refresh", nil)
//		…
//	}()
//
// or, where the panic must also end something (a turn), calls [Handle]
// with recover()'s value from a deferred function of its own.
//
// Tests must still fail on a panic: every recovered panic is kept (see
// [Recovered]), and [Main], run from a test package's TestMain, fails the
// package when one was recovered that a test did not cause on purpose
// (a panic value of type [Injected]).
package recovery

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
)

// PanicError is what a recovered panic becomes: the error answered for the
// piece of work that panicked.
type PanicError struct {
	What  string // the work that panicked: "session/prompt", "skills refresh"…
	Value any    // the value passed to panic
	Stack []byte // the panicking goroutine's stack
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("internal error: %s panicked: %v (a bug in codexacp; the agent goes on)", e.What, e.Value)
}

// Injected is the panic value of a test that panics on purpose (through a
// test seam): [Main] does not count it as a failure.
type Injected string

// Recover stops a panic of the calling goroutine; it must be deferred
// directly (recover works only there). The panic is logged to log (nil:
// slog.Default()) with its stack, and *errp, when errp is not nil, is set
// to its *PanicError. Without a panic it does nothing.
func Recover(log *slog.Logger, what string, errp *error) {
	if e := Handle(log, what, recover()); e != nil && errp != nil {
		*errp = e
	}
}

// LogPrefix starts the log line of every recovered panic: harnesses that
// run the agent as a process look for it in its stderr (a recovered panic
// is still a bug).
const LogPrefix = "recovered from a panic"

// Handle records the value recover() returned in a deferred function of
// the caller's: nil (no panic) gives nil; anything else is logged with the
// stack (still the panicking goroutine's, in a deferred call), kept for
// [Recovered], and returned as a *PanicError.
func Handle(log *slog.Logger, what string, v any) *PanicError {
	if v == nil {
		return nil
	}
	e := &PanicError{What: what, Value: v, Stack: debug.Stack()}
	if log == nil {
		log = slog.Default()
	}
	log.Error(LogPrefix+": "+what+" failed, the agent goes on", "panic", fmt.Sprint(v), "stack", string(e.Stack))
	mu.Lock()
	count++
	if len(kept) < maxKept {
		kept = append(kept, e)
	}
	mu.Unlock()
	return e
}

// maxKept bounds the panics kept for Recovered: a panic in a loop must not
// grow the process.
const maxKept = 100

var (
	mu    sync.Mutex
	kept  []*PanicError
	count int
)

// Recovered returns the number of panics recovered in this process and
// the first of them (at most 100).
func Recovered() (n int, first []*PanicError) {
	mu.Lock()
	defer mu.Unlock()
	return count, append([]*PanicError(nil), kept...)
}

// Main runs a test package's tests (m is the *testing.M of its TestMain)
// and returns the exit code for os.Exit: m.Run's, or 1 when a panic other
// than an [Injected] one was recovered while they ran, which it prints with
// its stack. A bug that would have crashed the agent fails its tests even
// though the agent survives it.
//
//	func TestMain(m *testing.M) { os.Exit(recovery.Main(m)) }
func Main(m interface{ Run() int }) int {
	code := m.Run()
	_, all := Recovered()
	for _, e := range all {
		if _, ok := e.Value.(Injected); ok {
			continue
		}
		fmt.Fprintf(os.Stderr, "recovery: a panic was recovered during the tests: %s\n%s\n", e.Error(), e.Stack)
		code = 1
	}
	return code
}
