//go:build unix && !linux

package proc

// watchdogScript sends codex its parent-death signal itself: only Linux has
// one in the kernel (see watchdogSignalScript).
const watchdogScript = watchdogSignalScript
