package acp

import (
	"testing"
	"time"
)

// waitFor receives from ch, failing the test after 30 s rather than hang.
func waitFor[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatal(what)
	}
}
