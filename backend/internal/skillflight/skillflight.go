// Package skillflight lets listings of one workspace's skills that overlap
// share one codex request; both backends list skills through it.
package skillflight

import (
	"context"
	"sync"

	"github.com/codexacp/codexacp/backend"
)

// Group lets listings of one workspace's skills that overlap share
// one codex request: a burst of sessions in one workspace (an editor
// restoring them, a script) asks codex once, not once per session, each
// listing costing codex a scan of the skill directories (120 at once: ~0.8
// s each on 2 cores, which the agent's exit then waited for). It is not a
// cache: a listing that starts after the last one ended asks codex again,
// and so does one that starts after the skills changed (changed): a
// listing begun before may have read them as they were. The zero value is
// ready to use.
type Group struct {
	mu       sync.Mutex
	inFlight map[string]*listing // by cwd: the newest listing
	gen      uint64              // changes seen: a listing joins only its own generation's
}

// listing is one codex request for a workspace's skills.
type listing struct {
	done   chan struct{}   // closed once skills and err are set
	skills []backend.Skill // shared by every caller: read only
	err    error
	joined int    // callers that joined it (under Group.mu)
	gen    uint64 // Group.gen when it started
}

// Changed is codex saying the skills changed on disk: listings that
// start from now on do not join one that started before.
func (f *Group) Changed() {
	f.mu.Lock()
	f.gen++
	f.mu.Unlock()
}

// Generation is how many changes were seen: a listing started now joins
// only listings of this generation.
func (f *Group) Generation() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen
}

// List returns cwd's skills, from the request in flight for cwd if there
// is one that started since the skills last changed, else from list,
// called with ctx. A caller that joined stops
// waiting when its own ctx ends; the request itself runs under the ctx of
// the caller that made it (every listing has the same bound,
// skillsTimeout).
func (f *Group) List(ctx context.Context, cwd string, list func(context.Context) ([]backend.Skill, error)) ([]backend.Skill, error) {
	f.mu.Lock()
	if l := f.inFlight[cwd]; l != nil && l.gen == f.gen {
		l.joined++
		f.mu.Unlock()
		select {
		case <-l.done:
			return l.skills, l.err
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	l := &listing{done: make(chan struct{}), gen: f.gen}
	if f.inFlight == nil {
		f.inFlight = make(map[string]*listing)
	}
	f.inFlight[cwd] = l
	f.mu.Unlock()

	defer func() {
		f.mu.Lock()
		if f.inFlight[cwd] == l { // not replaced by a newer generation's
			delete(f.inFlight, cwd)
		}
		f.mu.Unlock()
		close(l.done)
	}()
	l.skills, l.err = list(ctx)
	return l.skills, l.err
}
