package proc

import (
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// watchdog is codex's job object on Windows, which has neither process
// groups that can be signalled nor a parent-death signal. Every process
// codex starts joins the job, so terminating it ends codex and all it
// started (a cancel, KillGroup). The job is created kill-on-close and only
// the agent holds a handle to it: when the agent dies, however it dies, the
// kernel closes that handle and ends everything in the job; when codex has
// been reaped, stop closes it, ending whatever codex left behind.
//
// The standard library has no job objects (syscall wraps none of the job
// calls); golang.org/x/sys/windows does, without cgo. See docs/platforms.md.
type watchdog struct {
	mu  sync.Mutex
	job windows.Handle // 0 once stopped
}

// startWatchdog puts codex (pid, not reaped yet, so the pid still names it)
// into a new kill-on-close job object. Processes codex starts before that
// (it has run for microseconds) are not in the job. Without a job (nil),
// a cancel terminates codex alone and codex outlives a killed agent. The job
// ends codex with the agent at once: there is no grace period.
func startWatchdog(pid int, deathSig syscall.Signal, grace time.Duration, log *slog.Logger) *watchdog {
	job, err := newJob(pid)
	if err != nil {
		log.Debug("codex: no job object", "err", err)
		return nil
	}
	return &watchdog{job: job}
}

func newJob(pid int) (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil) // not inheritable
	if err != nil {
		return 0, fmt.Errorf("CreateJobObject: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("SetInformationJobObject: %w", err)
	}
	proc, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("OpenProcess: %w", err)
	}
	defer windows.CloseHandle(proc)
	if err := windows.AssignProcessToJobObject(job, proc); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	return job, nil
}

// kill terminates every process in the job; false when there is no job
// (none, or stopped).
func (w *watchdog) kill() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.job != 0 && windows.TerminateJobObject(w.job, 1) == nil
}

// stop closes the job once codex has been reaped: the kernel ends what is
// still in it.
func (w *watchdog) stop() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.job != 0 {
		windows.CloseHandle(w.job)
		w.job = 0
	}
}
