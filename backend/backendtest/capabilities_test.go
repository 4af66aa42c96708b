package backendtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/events"
)

// recorder is a testing.TB that keeps what CheckCapabilities reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// base is a backend that offers nothing beyond Run.
type base struct{ backend.Unsupported }

func (base) Name() string { return "test" }

func (base) Run(context.Context, backend.Turn, backend.Output) error { return nil }

// withCaps claims caps, whatever its methods do.
type withCaps struct {
	base
	caps backend.Capabilities
}

func (b withCaps) Capabilities() backend.Capabilities { return b.caps }

// warming has Warm and Forget of its own.
type warming struct{ withCaps }

func (warming) Warm(backend.Turn) {}
func (warming) Forget(string)     {}

// steering has Steer of its own, which fails as a backend's may.
type steering struct{ withCaps }

func (*steering) Steer(context.Context, string, string, []backend.Image) error {
	return backend.ErrNoRunningTurn
}

// limits has both rate-limit methods of its own.
type limits struct{ withCaps }

func (limits) LastRateLimits() *events.RateLimits { return nil }
func (limits) RateLimits(ctx context.Context) ([]events.RateLimits, error) {
	return nil, context.Cause(ctx)
}

// onlyRateLimits reads limits but never keeps the latest.
type onlyRateLimits struct{ withCaps }

func (onlyRateLimits) RateLimits(context.Context) ([]events.RateLimits, error) {
	return nil, errors.New("none yet")
}

// helper declares Prepare; embedded, it makes Prepare the backend's own.
type helper struct{}

func (*helper) Prepare(backend.Turn) {}

type preparing struct {
	withCaps
	*helper
}

// threadOps has only some of the thread commands.
type threadOps struct{ withCaps }

func (threadOps) Goal(context.Context, backend.Turn) (*backend.Goal, error) { return nil, nil }

// selfish embeds itself: the declaration search must end.
type selfish struct {
	withCaps
	*selfish
}

func TestCheckCapabilities(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    backend.Backend
		want []string // in the reports, one each; none: consistent
	}{
		{"nothing offered", base{}, nil},
		{"warm with its bit", warming{withCaps{caps: backend.Warm}}, nil},
		{"warm without its bit", warming{}, []string{"Warm is the backend's own, but Capabilities lacks Warm"}},
		{"warm bit without warm", withCaps{caps: backend.Warm}, []string{"Capabilities has Warm, but Warm is backend.Unsupported's"}},
		{"prepare from an embedded helper", preparing{withCaps{caps: backend.Prepare}, &helper{}}, nil},
		{"prepare from an embedded helper, no bit", preparing{helper: &helper{}}, []string{"Prepare is the backend's own"}},
		{"steer with its bit", &steering{withCaps{caps: backend.Steer}}, nil},
		{"steer without its bit", &steering{}, []string{"Steer answers no turn of the session is running, not ErrUnsupported, but Capabilities lacks Steer"}},
		{"steer bit without steer", withCaps{caps: backend.Steer}, []string{"Capabilities has Steer, but Steer answers unsupported operation"}},
		{"rate limits", limits{withCaps{caps: backend.RateLimits}}, nil},
		{"last rate limits without the bit", limits{}, []string{"RateLimits answers context canceled, not ErrUnsupported"}},
		{"rate limits without the latest", onlyRateLimits{withCaps{caps: backend.RateLimits}},
			[]string{"Capabilities has RateLimits, but LastRateLimits is backend.Unsupported's"}},
		{"half the thread commands", threadOps{withCaps{caps: backend.ThreadCommands}}, []string{
			"SetGoal answers unsupported", "ClearGoal answers unsupported", "RenameThread answers unsupported", "MCPServerStatus answers unsupported"}},
		{"fast mode: no method to check", withCaps{caps: backend.FastMode | backend.Review | backend.Compact | backend.Plan}, nil},
		{"embeds itself", selfish{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			CheckCapabilities(r, tc.b)
			if len(r.errs) != len(tc.want) {
				t.Errorf("reports:\n%s\nwant %d: %q", strings.Join(r.errs, "\n"), len(tc.want), tc.want)
				return
			}
			for i, w := range tc.want {
				if !strings.Contains(r.errs[i], w) {
					t.Errorf("report %q lacks %q", r.errs[i], w)
				}
			}
		})
	}
}
