package shelledits

import (
	"errors"
	"sync"
)

// WatchBudget is what notifiers may take of the user's inotify instances
// and watches (Linux), shared by the trackers that use it: by default the
// process's, a quarter of the user's limits (the editor's own file watcher
// and the user's other programs need theirs).
type WatchBudget struct {
	mu                 sync.Mutex
	instances, watches int // left
}

// NewWatchBudget returns a budget of the given instances and watches
// (a caller's own: tests, or a share of the process's).
func NewWatchBudget(instances, watches int) *WatchBudget {
	return &WatchBudget{instances: instances, watches: watches}
}

// Left reports the instances and watches not taken.
func (b *WatchBudget) Left() (instances, watches int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.instances, b.watches
}

// take takes instances and watches from the budget, if it has them.
func (b *WatchBudget) take(instances, watches int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.instances < instances || b.watches < watches {
		return false
	}
	b.instances -= instances
	b.watches -= watches
	return true
}

// give returns what take took.
func (b *WatchBudget) give(instances, watches int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.instances += instances
	b.watches += watches
}

// errBudget: the budget has no instance left.
var errBudget = errors.New("shelledits: the watch budget has no inotify instance left")
