package gates

import (
	"context"
	"testing"
	"time"
)

// wait bounds every wait of these tests, so a broken gate fails instead of
// hanging.
const wait = 30 * time.Second

func listen(t *testing.T) *Server {
	t.Helper()
	s, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func dial(t *testing.T, s *Server) *Client {
	t.Helper()
	c, err := Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestGatesOpenedBeforeAndAfterConnecting: a process that connects late
// finds the gates opened before it, and every connected process gets the
// ones opened later.
func TestGatesOpenedBeforeAndAfterConnecting(t *testing.T) {
	s := listen(t)
	s.Open("gate-1")
	a, b := dial(t, s), dial(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, c := range []*Client{a, b} {
		if !c.Wait(ctx, "gate-1") {
			t.Fatal("a gate opened before the process connected stays closed")
		}
	}
	done := make(chan bool, 2)
	for _, c := range []*Client{a, b} {
		go func() { done <- c.Wait(ctx, "gate-2") }()
	}
	s.Open("gate-2")
	for range 2 {
		if !<-done {
			t.Fatal("a gate opened later stays closed")
		}
	}
}

// TestGateStaysClosedUntilOpened: a wait for another gate than the one
// opened goes on until its context ends.
func TestGateStaysClosedUntilOpened(t *testing.T) {
	s := listen(t)
	c := dial(t, s)
	s.Open("gate-1")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if c.Wait(ctx, "gate-10") {
		t.Fatal("gate-10 opened, only gate-1 was")
	}
}

// TestMarksReachTheHarness: a mark from any process ends the harness's
// wait for it; a mark nobody made does not.
func TestMarksReachTheHarness(t *testing.T) {
	s := listen(t)
	a, b := dial(t, s), dial(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	waited := make(chan bool, 1)
	go func() { waited <- s.WaitMark(ctx, "line-3") }()
	if err := a.Mark("run-1"); err != nil {
		t.Fatal(err)
	}
	if err := b.Mark("line-3"); err != nil {
		t.Fatal(err)
	}
	if !<-waited {
		t.Fatal("the harness missed line-3")
	}
	if !s.WaitMark(ctx, "run-1") || !s.Marked("run-1") || s.Marked("line-4") {
		t.Errorf("marks: run-1 %v, line-4 %v", s.Marked("run-1"), s.Marked("line-4"))
	}
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if s.WaitMark(short, "line-4") {
		t.Error("line-4 was never marked")
	}
	if err := a.Mark("two\nlines"); err == nil {
		t.Error("a mark of two lines was sent")
	}
}

// TestHarnessGoneEndsTheWait: a process waiting at a gate is let go, with
// the gate closed, when the harness closes.
func TestHarnessGoneEndsTheWait(t *testing.T) {
	s := listen(t)
	c := dial(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s.Open("gate-1")
	if !c.Wait(ctx, "gate-1") {
		t.Fatal("gate-1 closed")
	}
	s.Close()
	if c.Wait(ctx, "gate-2") {
		t.Error("gate-2 opened by a harness that left")
	}
	if ctx.Err() != nil {
		t.Error("the wait lasted until its context ended, not until the harness left")
	}
}
