//go:build !linux

package shelledits

import (
	"context"
	"errors"
)

// notifySupported: without inotify every scan compares the whole root.
const notifySupported = false

// notifier is not available here: newNotifier always fails.
type notifier struct{}

func newNotifier(int, *WatchBudget) (*notifier, error) {
	return nil, errors.New("shelledits: no change notification on this platform")
}

func (*notifier) watch(abs, rel string) {}
func (*notifier) ok() bool              { return false }
func (*notifier) refusedByBudget() bool { return false }
func (*notifier) drain() changes        { return changes{any: true, full: true} }
func (*notifier) close()                {}
func (*notifier) stop()                 {}

// changes are the events since the last drain.
type changes struct {
	any, full, ignores bool
	dirs               map[string]bool
	gone               []string
	rootNames          map[string]bool
}

// notifyBudget is never taken from here.
var notifyBudget = func() *WatchBudget { return NewWatchBudget(0, 0) }

func watchDirs(context.Context, *repo, *notifier) error { return nil }
