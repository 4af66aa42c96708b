package backendtest

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/codexacp/codexacp/backend"
)

// CheckCapabilities checks that b's Capabilities and its methods say the
// same: each optional feature is declared twice (a method and a bit), and
// the agent calls a method only where the bit grants it, so a method
// without its bit is never called and a bit without its method fails or
// does nothing.
//
// Methods with an error are called, with zero arguments and a context
// that is already cancelled (nothing a backend does may outlive it): those
// the bits deny must answer backend.ErrUnsupported, those they grant must
// answer anything else (an error of their own is fine).
//
// Methods without an error cannot be told from a call, so their
// declaration is looked at instead: Warm and Prepare must be b's own
// (declared by b or a type it embeds other than backend.Unsupported)
// exactly when the Warm and Prepare bits are set; LastRateLimits must be
// b's own when RateLimits is set (the agent calls it whatever the bits
// say). Not checked: WatchSkills (a backend whose skills never change
// between turns leaves it a no-op; a Skills bit without Skills is found by
// the Skills call), Forget (called for every closed session), and the
// bits that only say which Turn fields are applied (Review, Compact, Plan,
// FastMode).
func CheckCapabilities(t testing.TB, b backend.Backend) {
	t.Helper()
	caps := b.Capabilities()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, p := range []struct {
		method string
		bit    backend.Capabilities
		call   func() error
	}{
		{"Skills", backend.Skills, func() error { _, err := b.Skills(ctx, backend.Turn{}); return err }},
		{"Steer", backend.Steer, func() error { return b.Steer(ctx, "", "", nil) }},
		{"ForkThread", backend.Fork, func() error { _, err := b.ForkThread(ctx, backend.Turn{}); return err }},
		{"DeleteThread", backend.DeleteThread, func() error { return b.DeleteThread(ctx, "") }},
		{"Goal", backend.ThreadCommands, func() error { _, err := b.Goal(ctx, backend.Turn{}); return err }},
		{"SetGoal", backend.ThreadCommands, func() error { _, err := b.SetGoal(ctx, backend.Turn{}, ""); return err }},
		{"ClearGoal", backend.ThreadCommands, func() error { return b.ClearGoal(ctx, backend.Turn{}) }},
		{"RenameThread", backend.ThreadCommands, func() error { return b.RenameThread(ctx, backend.Turn{}, "") }},
		{"MCPServerStatus", backend.ThreadCommands, func() error { _, err := b.MCPServerStatus(ctx, backend.Turn{}); return err }},
		{"RateLimits", backend.RateLimits, func() error { _, err := b.RateLimits(ctx); return err }},
	} {
		err := p.call()
		switch granted, unsupported := caps.Has(p.bit), errors.Is(err, backend.ErrUnsupported); {
		case granted && unsupported:
			t.Errorf("%s: Capabilities has %s, but %s answers %v", b.Name(), bitName(p.bit), p.method, err)
		case !granted && !unsupported:
			t.Errorf("%s: %s answers %v, not ErrUnsupported, but Capabilities lacks %s: the agent never calls it", b.Name(), p.method, err, bitName(p.bit))
		}
	}
	for _, d := range []struct {
		method      string
		bit         backend.Capabilities
		onlyGranted bool // an own method without the bit is fine
	}{
		{"Warm", backend.Warm, false},
		{"Prepare", backend.Prepare, false},
		{"LastRateLimits", backend.RateLimits, true},
	} {
		own := ownMethod(reflect.TypeOf(b), d.method)
		switch granted := caps.Has(d.bit); {
		case granted && !own:
			t.Errorf("%s: Capabilities has %s, but %s is backend.Unsupported's, which does nothing", b.Name(), bitName(d.bit), d.method)
		case !granted && own && !d.onlyGranted:
			t.Errorf("%s: %s is the backend's own, but Capabilities lacks %s: the agent never calls it", b.Name(), d.method, bitName(d.bit))
		}
	}
}

// bitNames names the Capabilities bits, for messages.
var bitNames = map[backend.Capabilities]string{
	backend.Review: "Review", backend.Compact: "Compact", backend.Skills: "Skills", backend.ThreadCommands: "ThreadCommands",
	backend.Plan: "Plan", backend.Fork: "Fork", backend.DeleteThread: "DeleteThread", backend.Steer: "Steer",
	backend.FastMode: "FastMode", backend.Warm: "Warm", backend.Prepare: "Prepare", backend.RateLimits: "RateLimits",
}

func bitName(c backend.Capabilities) string {
	if n, ok := bitNames[c]; ok {
		return n
	}
	return "an unnamed bit"
}

// ownMethod reports whether t's method name is declared by anything but
// backend.Unsupported (or t does not tell: an embedded interface).
func ownMethod(t reflect.Type, name string) bool {
	decl, _ := declarer(t, name, 0)
	return decl != nil && decl != reflect.TypeOf(backend.Unsupported{})
}

// declarer returns the type that declares t's method name, following Go's
// promotion through embedded fields (the shallowest wins), and its depth;
// nil when t has no such method. An embedded interface declares it (its
// dynamic type is not known). A method is declared by a type when its
// code is not a promotion wrapper, which the compiler generates without a
// source position.
func declarer(t reflect.Type, name string, depth int) (reflect.Type, int) {
	if depth > 8 { // type T struct{ *T } embeds itself
		return nil, 0
	}
	base := t
	if base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() == reflect.Interface {
		if _, ok := base.MethodByName(name); ok {
			return base, depth
		}
		return nil, 0
	}
	for _, rt := range []reflect.Type{base, reflect.PointerTo(base)} {
		if m, ok := rt.MethodByName(name); ok && !promoted(m) {
			return base, depth
		}
	}
	if base.Kind() != reflect.Struct {
		return nil, 0
	}
	var found reflect.Type
	foundDepth := 0
	for i := range base.NumField() {
		f := base.Field(i)
		if !f.Anonymous {
			continue
		}
		if d, dd := declarer(f.Type, name, depth+1); d != nil && (found == nil || dd < foundDepth) {
			found, foundDepth = d, dd
		}
	}
	return found, foundDepth
}

// promoted reports whether m's code is a wrapper the compiler generated
// (a method promoted from an embedded field, or a pointer receiver's
// wrapper of a value method).
func promoted(m reflect.Method) bool {
	f := runtime.FuncForPC(m.Func.Pointer())
	if f == nil {
		return true
	}
	file, _ := f.FileLine(f.Entry())
	return file == "<autogenerated>"
}
