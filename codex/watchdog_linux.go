package codex

import (
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// watchdogScript runs in codex's process group. EOF on its stdin means the
// agent is gone (it holds the only write end); codex then has had its
// parent-death SIGINT and gets up to two seconds to exit before the whole
// group is SIGKILLed. While the watchdog lives, codex's pid and group id
// cannot be reused, so $1 and "kill 0" cannot hit another process.
//
// A dead codex may stay a zombie for a while (its new parent reaps it when
// it gets to it), so "runs" means: not a zombie.
const watchdogScript = `read -r _
runs() { s=$(cat /proc/$1/stat 2>/dev/null) || return 1; s=${s##*) }; [ "${s%% *}" != Z ]; }
i=0
while [ $i -lt 20 ] && runs "$1"; do sleep 0.1; i=$((i+1)); done
kill -KILL 0
`

// watchdog kills codex's process group when the agent dies and codex does
// not end by itself.
type watchdog struct {
	cmd  *exec.Cmd
	hold *os.File // the write end of its stdin
}

// startWatchdog starts the watchdog of codex (pid), which must not have been
// reaped yet: the watchdog joins its process group. Without /bin/sh there is
// none (nil), and codex relies on its parent-death signal alone.
func startWatchdog(pid int, log *slog.Logger) *watchdog {
	r, w, err := os.Pipe()
	if err != nil {
		log.Debug("codex: no watchdog", "err", err)
		return nil
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "codexacp-watchdog", strconv.Itoa(pid))
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
