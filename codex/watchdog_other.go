//go:build !linux

package codex

import "log/slog"

// watchdog does nothing outside Linux: without a parent-death signal there
// is nothing to back up.
type watchdog struct{}

func startWatchdog(pid int, log *slog.Logger) *watchdog { return nil }

func (w *watchdog) stop() {}
