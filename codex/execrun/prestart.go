package execrun

import (
	"strings"
	"sync"
	"time"

	"github.com/codexacp/codexacp/internal/recovery"
)

// Prestart starts the codex process for inv now, to wait on stdin until a
// Run of the same invocation (same command line, environment and working
// directory; the prompt aside) writes its prompt. codex does only its
// process start-up before reading stdin (its configuration and thread come
// after; see docs/codex.md#pinned-codex-facts), so that much of a turn
// happens while the user types.
//
// A process that waits longer than idle (when idle > 0) is ended, and so is
// one whose invocation Discard names or that Close finds. The caller keeps
// the number of waiting processes bounded (the agent: codexexec.Backend's
// MaxWarm, all sessions together); Prestart of an invocation that already has a live waiting process does
// nothing. Errors are the ones Run would return at start.
func (r *Runner) Prestart(inv Invocation, idle time.Duration) error {
	if err := inv.validate(); err != nil {
		return err
	}
	key := r.key(inv)
	r.mu.Lock()
	if r.closed || (r.waiting[key] != nil && !r.waiting[key].p.HasExited()) {
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()

	st, err := r.start(inv)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		st.discard()
		return nil
	}
	if r.waiting == nil {
		r.waiting = make(map[string]*started)
	}
	old := r.waiting[key]
	r.waiting[key] = st
	r.mu.Unlock()
	if old != nil {
		old.discard()
	}
	r.logger().Debug("codex waiting for its prompt", "pid", st.p.Pid())
	go func() {
		defer recovery.Recover(r.logger(), "waiting codex", nil)
		var expired <-chan time.Time
		if idle > 0 {
			timer := time.NewTimer(idle)
			defer timer.Stop()
			expired = timer.C
		}
		select {
		case <-expired:
			if r.remove(key, st) {
				r.logger().Debug("waiting codex idle too long; ended", "pid", st.p.Pid(), "idle", idle)
				st.discard()
			}
		case <-st.p.Exited():
			// Still waiting, it died: forget it now (its pipes with it).
			// Taken by a Run or discarded, it is not there any more.
			if r.remove(key, st) {
				r.logger().Debug("waiting codex exited", "pid", st.p.Pid(), "stderr", st.stderr.Tail())
				st.discard()
			}
		}
	}()
	return nil
}

// Discard ends the waiting process started for inv, if any.
func (r *Runner) Discard(inv Invocation) {
	if st := r.pop(inv); st != nil {
		st.discard()
	}
}

// pop removes and returns the waiting process started for inv, if any.
func (r *Runner) pop(inv Invocation) *started {
	key := r.key(inv)
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.waiting[key]
	delete(r.waiting, key)
	return st
}

// Close ends every waiting process; later Prestarts start nothing. Runs
// still going are not affected.
func (r *Runner) Close() {
	r.mu.Lock()
	r.closed = true
	all := r.waiting
	r.waiting = nil
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, st := range all {
		wg.Go(func() {
			defer recovery.Recover(r.logger(), "ending a waiting codex", nil)
			st.discard()
		})
	}
	wg.Wait()
}

// takeWaiting hands Run the live waiting process for inv, if there is one.
// One that died while waiting is ended and forgotten: Run starts afresh.
func (r *Runner) takeWaiting(inv Invocation) *started {
	st := r.pop(inv)
	if st == nil {
		return nil
	}
	if st.p.HasExited() {
		r.logger().Debug("waiting codex had exited; starting another", "pid", st.p.Pid(), "stderr", st.stderr.Tail())
		st.discard()
		return nil
	}
	st.log.Debug("waiting codex takes its prompt", "pid", st.p.Pid())
	return st
}

// remove forgets st under key unless something else took its place; it
// reports whether st was still there.
func (r *Runner) remove(key string, st *started) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waiting[key] != st {
		return false
	}
	delete(r.waiting, key)
	return true
}

// key identifies the codex command inv runs (its working directory,
// command line and environment): two invocations with the same key start
// the same process.
func (r *Runner) key(inv Invocation) string {
	args, env := r.Command(inv)
	var b strings.Builder
	b.WriteString(inv.Cwd)
	for _, list := range [][]string{args, env} {
		b.WriteByte(0)
		for _, s := range list {
			b.WriteString(s)
			b.WriteByte(0)
		}
	}
	return b.String()
}
