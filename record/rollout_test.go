package record

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/codex/execrun"
)

// TestRolloutEntries: the rollout records an exec turn read become rollout
// entries of the thread's run — a resumed thread's (its invocation names
// it), a new one's (thread.started), also when read after the run ended —
// with the path under $CODEX_HOME.
func TestRolloutEntries(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "sessions", "2026", "11", "27", "rollout-x-th-new.jsonl")
	var buf bytes.Buffer
	r := New(&buf)
	r.SetDirs("", home)
	r.Start("codexacp test", 0)
	call := []byte(`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","call_id":"c1"}}`)
	refusal := []byte(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"approval policy is Never; reject command"}}`)
	runner := runnerFunc(func(ctx context.Context, inv execrun.Invocation, onLine func([]byte)) error {
		if inv.ThreadID == "" {
			onLine([]byte(`{"type":"thread.started","thread_id":"th-new"}`))
			r.Rollout("th-new", path, call)
		} else {
			r.Rollout(inv.ThreadID, path, call)
		}
		return nil
	})
	b := r.Backend(runner, nil)
	b.Run(context.Background(), execrun.Invocation{Prompt: "one"}, func([]byte) {})
	r.Rollout("th-new", path, refusal) // after codex exited
	b.Run(context.Background(), execrun.Invocation{Prompt: "two", ThreadID: "th-old"}, func([]byte) {})
	r.Rollout("th-unknown", path, []byte("not json"))

	entries, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if e.Kind != KindRollout {
			continue
		}
		if want := CodexHomePlaceholder + "/sessions/2026/11/27/rollout-x-th-new.jsonl"; e.Path != want {
			t.Errorf("path %q, want %q", e.Path, want)
		}
		line := string(e.Line)
		if e.Line == nil {
			line = "text:" + e.Text
		}
		got = append(got, strings.Join([]string{string(rune('0' + e.Run)), line}, " "))
	}
	want := []string{"1 " + string(call), "1 " + string(refusal), "2 " + string(call), "0 text:not json"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rollout entries\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type runnerFunc func(ctx context.Context, inv execrun.Invocation, onLine func([]byte)) error

func (f runnerFunc) Run(ctx context.Context, inv execrun.Invocation, onLine func([]byte)) error {
	return f(ctx, inv, onLine)
}
