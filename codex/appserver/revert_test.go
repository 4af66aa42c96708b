package appserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

// LastTurns pages through thread/turns/list newest first; RevertLast cuts
// before the n-th last turn of a loaded thread and nothing when there are
// fewer; RevertStored loads the thread first (the fake, like codex, cannot
// revert a thread it has not loaded). The real codex: e2e/codexexec.
func TestRevert(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _ := startFake(t, "", nil)
	for _, tc := range []struct {
		n    int
		want string
	}{{1, "[turn-5]"}, {3, "[turn-5 turn-4 turn-3]"}, {60, "[turn-5 turn-4 turn-3 turn-2 turn-1]"}} {
		ids, err := c.LastTurns(ctx, "th", tc.n)
		if err != nil || fmt.Sprint(ids) != tc.want {
			t.Errorf("LastTurns(%d) = %v, %v; want %s", tc.n, ids, err, tc.want)
		}
	}
	if _, err := c.RevertLast(ctx, "th", 2); err == nil {
		t.Error("a thread not loaded was reverted")
	}
	call(t, c, "thread/resume", map[string]any{"threadId": "th"}, nil)
	for _, n := range []int{0, 6} {
		if _, err := c.RevertLast(ctx, "th", n); !errors.Is(err, ErrNotEnoughTurns) {
			t.Errorf("RevertLast(%d): %v", n, err)
		}
	}
	if ids, err := c.RevertLast(ctx, "th", 2); err != nil || fmt.Sprint(ids) != "[turn-5 turn-4]" {
		t.Fatalf("RevertLast(2) = %v, %v", ids, err)
	}
	if ids, _ := c.LastTurns(ctx, "th", 10); fmt.Sprint(ids) != "[turn-3 turn-2 turn-1]" {
		t.Errorf("after the revert: %v", ids)
	}

	opts := Options{Path: os.Args[0], Env: append(os.Environ(), fakeAppServerEnv+"=", "GORACE=atexit_sleep_ms=0"),
		Grace: 500 * time.Millisecond, Logger: slogDiscard}
	if ids, err := RevertStored(ctx, opts, "th", 1); err != nil || fmt.Sprint(ids) != "[turn-5]" {
		t.Errorf("RevertStored = %v, %v", ids, err)
	}
}

// RevertTurns cuts only the turns named, when they are the thread's last
// in that order; anything else cuts nothing.
func TestRevertTurns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _ := startFake(t, "", nil)
	call(t, c, "thread/resume", map[string]any{"threadId": "th"}, nil)
	for _, ids := range [][]string{nil, {"turn-5", "turn-4"}, {"turn-3", "turn-5"}, {"turn-4", ""}, {"turn-1", "turn-2", "turn-3", "turn-4", "turn-5", "turn-6"}} {
		if err := c.RevertTurns(ctx, "th", ids); !errors.Is(err, ErrTurnsDiffer) && !errors.Is(err, ErrNotEnoughTurns) {
			t.Errorf("RevertTurns(%q): %v", ids, err)
		}
	}
	if ids, _ := c.LastTurns(ctx, "th", 10); len(ids) != 5 {
		t.Fatalf("a refused revert cut turns: %v", ids)
	}
	if err := c.RevertTurns(ctx, "th", []string{"turn-4", "turn-5"}); err != nil {
		t.Fatal(err)
	}
	if ids, _ := c.LastTurns(ctx, "th", 10); fmt.Sprint(ids) != "[turn-3 turn-2 turn-1]" {
		t.Errorf("after the revert: %v", ids)
	}
	opts := Options{Path: os.Args[0], Env: append(os.Environ(), fakeAppServerEnv+"=", "GORACE=atexit_sleep_ms=0"),
		Grace: 500 * time.Millisecond, Logger: slogDiscard}
	if err := RevertStoredTurns(ctx, opts, "th", []string{"turn-4"}); !errors.Is(err, ErrTurnsDiffer) {
		t.Errorf("RevertStoredTurns of a turn not last: %v", err)
	}
	if err := RevertStoredTurns(ctx, opts, "th", []string{"turn-5"}); err != nil {
		t.Errorf("RevertStoredTurns: %v", err)
	}
}
