package appserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/appserver/protocol"
	"github.com/codexacp/codexacp/events"
)

// rateLimitReadTimeout bounds /status's wait for account/rateLimits/read
// (codex asks OpenAI's backend).
const rateLimitReadTimeout = 5 * time.Second

// rateLimitStore keeps the snapshots codex sent, by limit id. Safe for
// concurrent use.
type rateLimitStore struct {
	mu   sync.Mutex
	last *events.RateLimits
	byID map[string]events.RateLimits
}

// notify keeps the limits of an account/rateLimits/updated notification;
// other methods, and snapshots that say nothing (codex sends one with
// every field null after a response without the headers), change nothing.
// Cheap: it runs on the app-server client's reader goroutine.
func (r *rateLimitStore) notify(method string, params json.RawMessage) bool {
	if method != protocol.AccountRateLimitsUpdated.Method() {
		return false
	}
	l, err := events.ParseRateLimitsUpdated(params)
	if err != nil || l.Empty() {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = l
	if r.byID == nil {
		r.byID = map[string]events.RateLimits{}
	}
	if _, ok := r.byID[l.LimitID]; ok || len(r.byID) < 64 { // bounded: codex meters a handful
		r.byID[l.LimitID] = *l
	}
	return true
}

func (r *rateLimitStore) latest() *events.RateLimits {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil
	}
	l := *r.last
	return &l
}

// all is every limit seen, "codex" first.
func (r *rateLimitStore) all() []events.RateLimits {
	r.mu.Lock()
	defer r.mu.Unlock()
	ls := make([]events.RateLimits, 0, len(r.byID))
	for _, l := range r.byID {
		ls = append(ls, l)
	}
	slices.SortFunc(ls, func(a, b events.RateLimits) int {
		if (a.LimitID == "codex") != (b.LimitID == "codex") {
			if a.LimitID == "codex" {
				return -1
			}
			return 1
		}
		return strings.Compare(a.LimitID, b.LimitID)
	})
	return ls
}

var errNoRateLimits = errors.New("codex has reported no usage limits yet")

func (b *Backend) LastRateLimits() *events.RateLimits { return b.limits.latest() }

// RateLimits implements backend.Backend. It does not start an app-server
// for /status: without one running, what codex sent so far.
func (b *Backend) RateLimits(ctx context.Context) ([]events.RateLimits, error) {
	b.mu.Lock()
	server := b.server
	b.mu.Unlock()
	var readErr error
	if server != nil {
		ctx, cancel := context.WithTimeout(ctx, rateLimitReadTimeout)
		defer cancel()
		var res protocol.GetAccountRateLimitsResponse
		if res, readErr = codexapp.Call(ctx, server, protocol.AccountRateLimitsRead, protocol.GetAccountRateLimitsParams{}); readErr == nil {
			ls, err := events.RateLimitsRead(res)
			if err == nil {
				return ls, nil
			}
			readErr = err
		}
	}
	if ls := b.limits.all(); len(ls) > 0 {
		return ls, nil
	}
	if readErr != nil {
		return nil, fmt.Errorf("%w (%s: %v)", errNoRateLimits, protocol.AccountRateLimitsRead.Method(), readErr)
	}
	return nil, errNoRateLimits
}
