package fsops

import (
	"context"
	"sync"
)

// processLocks serialises writes to a file across every engine of the
// process: two sessions editing one file must not interleave. The engine
// locks resolved paths, so a file and a symlink to it share one lock. (Two
// hard links to one file are still two paths.)
var processLocks = newPathLocks()

// pathLocks hands out one lock per path. An entry lives only while some
// call holds or waits for it, so the table does not grow with the number
// of paths ever written.
type pathLocks struct {
	mu sync.Mutex
	m  map[string]*pathLock
}

type pathLock struct {
	held chan struct{} // a token in the channel means locked
	refs int           // holders and waiters
}

func newPathLocks() *pathLocks { return &pathLocks{m: make(map[string]*pathLock)} }

// lock waits until path is free or ctx is done, and returns the unlock
// function.
func (l *pathLocks) lock(ctx context.Context, path string) (func(), error) {
	l.mu.Lock()
	pl := l.m[path]
	if pl == nil {
		pl = &pathLock{held: make(chan struct{}, 1)}
		l.m[path] = pl
	}
	pl.refs++
	l.mu.Unlock()

	select {
	case pl.held <- struct{}{}:
	case <-ctx.Done():
		l.release(path, pl)
		return nil, ctx.Err()
	}
	return func() {
		<-pl.held
		l.release(path, pl)
	}, nil
}

func (l *pathLocks) release(path string, pl *pathLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	pl.refs--
	if pl.refs == 0 {
		delete(l.m, path)
	}
}

// size returns the number of paths with a live entry.
func (l *pathLocks) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
