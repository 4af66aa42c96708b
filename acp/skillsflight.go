package acp

import (
	"context"
	"sync"

	"github.com/codexacp/codexacp/backend"
)

// skillListings lets listings of one workspace's skills that overlap share
// one codex request: a burst of sessions in one workspace (an editor
// restoring them, a script) asks codex once, not once per session, each
// listing costing codex a scan of the skill directories (120 at once: ~0.8
// s each on 2 cores, which the agent's exit then waited for). It is not a
// cache: a listing that starts after the last one ended asks codex again,
// and so does one that starts after the skills changed (changed): a
// listing begun before may have read them as they were. The zero value is
// ready to use.
type skillListings struct {
	mu       sync.Mutex
	inFlight map[string]*skillListing // by cwd: the newest listing
	gen      uint64                   // changes seen: a listing joins only its own generation's
}

// skillListing is one codex request for a workspace's skills.
type skillListing struct {
	done   chan struct{}   // closed once skills and err are set
	skills []backend.Skill // shared by every caller: read only
	err    error
	joined int    // callers that joined it (under skillListings.mu)
	gen    uint64 // skillListings.gen when it started
}

// changed is codex saying the skills changed on disk: listings that
// start from now on do not join one that started before.
func (f *skillListings) changed() {
	f.mu.Lock()
	f.gen++
	f.mu.Unlock()
}

// list returns cwd's skills, from the request in flight for cwd if there
// is one that started since the skills last changed, else from list,
// called with ctx. A caller that joined stops
// waiting when its own ctx ends; the request itself runs under the ctx of
// the caller that made it (every listing has the same bound,
// skillsTimeout).
func (f *skillListings) list(ctx context.Context, cwd string, list func(context.Context) ([]backend.Skill, error)) ([]backend.Skill, error) {
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
	l := &skillListing{done: make(chan struct{}), gen: f.gen}
	if f.inFlight == nil {
		f.inFlight = make(map[string]*skillListing)
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
