package proc

// watchdogScript runs in codex's process group. EOF on its stdin means the
// agent is gone (it holds the only write end); codex then has had its
// parent-death signal from the kernel (procAttr) and gets the grace period ($3
// tenths of a second) to exit before the whole group is SIGKILLed. While the watchdog lives,
// codex's pid and group id cannot be reused, so $1 and "kill 0" cannot hit
// another process.
//
// A dead codex may stay a zombie for a while (its new parent reaps it when
// it gets to it), so "runs" means: not a zombie.
const watchdogScript = `read -r _
runs() { s=$(cat /proc/$1/stat 2>/dev/null) || return 1; s=${s##*) }; [ "${s%% *}" != Z ]; }
i=0
while [ $i -lt "$3" ] && runs "$1"; do sleep 0.1; i=$((i+1)); done
kill -KILL 0
`
