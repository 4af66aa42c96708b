package codex

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rolloutFixture writes rollout files under a codex home, in the shape
// codex 0.169 writes them (e2e/codexexec/revert_test.go checks the real
// ones): a session_meta line, then numbered records.
type rolloutFixture struct {
	t    *testing.T
	home string
	dir  string
}

func newRolloutFixture(t *testing.T) *rolloutFixture {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "11", "27")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &rolloutFixture{t: t, home: home, dir: dir}
}

// write writes a file named name whose session_meta has ordinal first and
// base (nil: none), then records of the given texts numbered from first+1.
// It returns the byte offset where each record ends.
func (f *rolloutFixture) write(name string, first int, base *historyBase, texts ...string) map[string]int64 {
	meta := `{"ordinal":%d,"type":"session_meta","payload":{"id":"x"}}`
	if base != nil {
		meta = fmt.Sprintf(`{"ordinal":%%d,"type":"session_meta","payload":{"id":"x","history_base":{"thread_id":%q,"end_ordinal_exclusive":%d,"end_byte_offset":%d}}}`,
			base.ThreadID, base.End, base.Offset)
	}
	var b strings.Builder
	fmt.Fprintf(&b, meta+"\n", first)
	ends := map[string]int64{}
	for i, text := range texts {
		fmt.Fprintf(&b, `{"ordinal":%d,"type":"event_msg","payload":{"type":"item_completed","text":%q}}`+"\n", first+1+i, text)
		ends[text] = int64(b.Len())
	}
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(b.String()), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return ends
}

// history reads the thread's history and returns its texts.
func (f *rolloutFixture) history(thread string) (string, error) {
	h, err := OpenRolloutHistory(f.home, thread)
	if err != nil {
		return "", err
	}
	defer h.Close()
	b, err := io.ReadAll(h)
	if err != nil {
		return "", err
	}
	var texts []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if _, rest, ok := strings.Cut(line, `"text":"`); ok {
			texts = append(texts, rest[:strings.IndexByte(rest, '"')])
		}
	}
	return strings.Join(texts, " "), nil
}

const (
	threadA = "01a20602-0000-7000-8000-00000000000a"
	threadB = "01a20602-0000-7000-8000-00000000000b"
)

func TestRolloutHistory(t *testing.T) {
	t.Run("one file", func(t *testing.T) {
		f := newRolloutFixture(t)
		f.write("rollout-2026-11-27T10-00-00-"+threadA+".jsonl", 0, nil, "apple", "banana")
		if got, err := f.history(threadA); err != nil || got != "apple banana" {
			t.Errorf("history %q, %v", got, err)
		}
	})
	t.Run("a file without ordinals is read whole", func(t *testing.T) {
		f := newRolloutFixture(t)
		os.WriteFile(filepath.Join(f.dir, "rollout-2026-11-27T10-00-00-"+threadA+".jsonl"),
			[]byte(`{"type":"session_meta","payload":{}}`+"\n"+`{"type":"event_msg","payload":{"text":"old"}}`+"\n"), 0o644)
		if got, err := f.history(threadA); err != nil || got != "old" {
			t.Errorf("history %q, %v", got, err)
		}
	})
	t.Run("revert", func(t *testing.T) {
		f := newRolloutFixture(t)
		ends := f.write("rollout-2026-11-27T10-00-00-"+threadA+".jsonl", 0, nil, "apple", "banana")
		f.write("rollout-2026-11-27T10-00-05-"+threadA+"_01a20602-1111-7000-8000-000000000001.jsonl", 2,
			&historyBase{ThreadID: threadA, End: 2, Offset: ends["apple"]}, "which")
		if got, err := f.history(threadA); err != nil || got != "apple which" {
			t.Errorf("history %q, %v", got, err)
		}
		if head, _ := RolloutHead(f.home, threadA); !strings.Contains(head, "_01a20602-1111") {
			t.Errorf("head %s", head)
		}
	})
	t.Run("revert of a revision", func(t *testing.T) {
		f := newRolloutFixture(t)
		ends := f.write("rollout-2026-11-27T10-00-00-"+threadA+".jsonl", 0, nil, "apple", "banana")
		ends1 := f.write("rollout-2026-11-27T10-00-05-"+threadA+"_01a20602-1111-7000-8000-000000000001.jsonl", 2,
			&historyBase{ThreadID: threadA, End: 2, Offset: ends["apple"]}, "cherry", "damson")
		// The second revert keeps cherry (ordinal 3), drops damson.
		f.write("rollout-2026-11-27T10-00-05-"+threadA+"_01a20602-1111-7000-8000-000000000002.jsonl", 4,
			&historyBase{ThreadID: threadA, End: 4, Offset: ends1["cherry"]}, "elder")
		if got, err := f.history(threadA); err != nil || got != "apple cherry elder" {
			t.Errorf("history %q, %v", got, err)
		}
	})
	t.Run("fork", func(t *testing.T) {
		f := newRolloutFixture(t)
		ends := f.write("rollout-2026-11-27T10-00-00-"+threadA+".jsonl", 0, nil, "apple", "banana")
		f.write("rollout-2026-11-27T10-00-09-"+threadB+".jsonl", 3,
			&historyBase{ThreadID: threadA, End: 3, Offset: ends["banana"]}, "fig")
		if got, err := f.history(threadB); err != nil || got != "apple banana fig" {
			t.Errorf("history %q, %v", got, err)
		}
	})
	t.Run("empty base", func(t *testing.T) {
		f := newRolloutFixture(t)
		f.write("rollout-2026-11-27T10-00-00-"+threadA+".jsonl", 0, nil, "apple")
		f.write("rollout-2026-11-27T10-00-05-"+threadA+"_01a20602-1111-7000-8000-000000000001.jsonl", 0,
			&historyBase{ThreadID: threadA, End: 0, Offset: 0}, "new")
		if got, err := f.history(threadA); err != nil || got != "new" {
			t.Errorf("history %q, %v", got, err)
		}
	})
	// A chain that cannot be followed to its start: its newest part,
	// said so.
	for name, base := range map[string]historyBase{
		"base not found":        {ThreadID: threadA, End: 2, Offset: 7},
		"base of a thread gone": {ThreadID: threadB, End: 2, Offset: 7},
		"base is itself":        {ThreadID: threadA, End: 1, Offset: 0},
	} {
		t.Run(name, func(t *testing.T) {
			f := newRolloutFixture(t)
			f.write("rollout-2026-11-27T10-00-00-"+threadA+".jsonl", int(base.End), &base, "apple")
			h, err := OpenRolloutHistory(f.home, threadA)
			if err != nil || h.Broken == nil || len(h.Files) != 1 {
				t.Fatalf("history %+v, %v; want the file itself, broken", h, err)
			}
			h.Close()
			if got, _ := f.history(threadA); got != "apple" {
				t.Errorf("history %q", got)
			}
		})
	}
	t.Run("a base that is not one", func(t *testing.T) {
		f := newRolloutFixture(t)
		f.write("rollout-2026-11-27T10-00-00-"+threadA+".jsonl", 0, &historyBase{ThreadID: threadA, End: 1, Offset: -1}, "apple")
		if _, err := OpenRolloutHistory(f.home, threadA); err == nil {
			t.Error("a negative offset was taken")
		}
	})
	t.Run("a loop", func(t *testing.T) {
		// Two first files whose bases are each other's session_meta
		// (ordinal 0, ending where the base says): offsets of three
		// digits keep the lines' lengths what they were measured with.
		f := newRolloutFixture(t)
		meta := func(base string, offset int) string {
			return fmt.Sprintf(`{"ordinal":0,"type":"session_meta","payload":{"history_base":{"thread_id":%q,"end_ordinal_exclusive":1,"end_byte_offset":%d}}}`+"\n", base, offset)
		}
		lenA, lenB := len(meta(threadB, 100)), len(meta(threadA, 100))
		os.WriteFile(filepath.Join(f.dir, "rollout-2026-11-27T10-00-00-"+threadA+".jsonl"), []byte(meta(threadB, lenB)), 0o644)
		os.WriteFile(filepath.Join(f.dir, "rollout-2026-11-27T10-00-00-"+threadB+".jsonl"), []byte(meta(threadA, lenA)), 0o644)
		h, err := OpenRolloutHistory(f.home, threadA)
		if err != nil || h.Broken == nil || !strings.Contains(h.Broken.Error(), "loop") {
			t.Errorf("a loop: %+v, %v", h, err)
		}
	})
}
