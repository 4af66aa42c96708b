//go:build unix

package proc

import (
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// watchdogSignalScript is the watchdog where the kernel has no parent-death
// signal (macOS, the BSDs): on EOF it sends codex the signal ($2) itself,
// then, as on Linux, gives codex the grace period ($3 tenths of a second)
// before the whole group is SIGKILLed. "kill -0" counts a zombie as running: codex's new parent (init,
// launchd) reaps it at once, so that only delays the group kill.
const watchdogSignalScript = `read -r _
kill -"$2" "$1" 2>/dev/null
i=0
while [ $i -lt "$3" ] && kill -0 "$1" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
kill -KILL 0
`

// watchdog kills codex's process group when the agent dies and codex does
// not end by itself.
type watchdog struct {
	cmd  *exec.Cmd
	hold *os.File // the write end of its stdin
}

// startWatchdog starts the watchdog of codex (pid), which must not have been
// reaped yet: the watchdog joins its process group. deathSig is what codex
// gets when the agent dies: from the kernel on Linux (procAttr), from the
// watchdog elsewhere; grace is how long codex then has before its group is
// killed. Without /bin/sh there is none (nil), and codex relies on its
// parent-death signal alone (on Linux; elsewhere it outlives the agent).
func startWatchdog(pid int, deathSig syscall.Signal, grace time.Duration, log *slog.Logger) *watchdog {
	return runWatchdog(watchdogScript, pid, deathSig, grace, log)
}

// runWatchdog starts script as the watchdog of pid, with pid, deathSig's
// number and grace in tenths of a second (at least one) as $1, $2 and $3.
func runWatchdog(script string, pid int, deathSig syscall.Signal, grace time.Duration, log *slog.Logger) *watchdog {
	tenths := max(1, int((grace+100*time.Millisecond-1)/(100*time.Millisecond)))
	r, w, err := os.Pipe()
	if err != nil {
		log.Debug("codex: no watchdog", "err", err)
		return nil
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", script, "codexacp-watchdog", strconv.Itoa(pid), strconv.Itoa(int(deathSig)), strconv.Itoa(tenths))
	cmd.Stdin = r
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	// No parent-death signal: it has to outlive the agent.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pid}
	if err := cmd.Start(); err != nil {
		w.Close()
		log.Debug("codex: no watchdog", "err", err)
		return nil
	}
	return &watchdog{cmd: cmd, hold: w}
}

// stop ends the watchdog; codex has been reaped.
func (w *watchdog) stop() {
	if w == nil {
		return
	}
	// Killed before its stdin closes, so it never takes that for the
	// agent's death.
	w.cmd.Process.Kill()
	w.cmd.Wait()
	w.hold.Close()
}
