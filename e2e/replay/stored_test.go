package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/record"
)

func text(s string) *string { return &s }

// TestStoredFilesGoWithTheirRequest: a stored entry is recreated before the
// list or load request it was read for, even when other editor messages
// came in between.
func TestStoredFilesGoWithTheirRequest(t *testing.T) {
	in := func(msg string) record.Entry {
		return record.Entry{Kind: record.KindACP, Dir: record.DirIn, Msg: []byte(msg)}
	}
	stored := func(path string) record.Entry {
		return record.Entry{Kind: record.KindStored, Path: path, Exists: true, Content: text("{}")}
	}
	entries := []record.Entry{
		{Kind: record.KindStart, Format: record.FormatVersion},
		in(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`),
		in(`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`),
		stored("/s/a.json"),
		in(`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"sess_a"}}`),
		in(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"sess_b"}}`),
		stored("/s/a.json"),
		stored("/h/rollout-t.jsonl"),
	}
	sc, err := newScript(entries)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range sc.actions {
		var paths []string
		for _, e := range a.stored {
			paths = append(paths, e.Path)
		}
		got = append(got, strings.Join(paths, "+"))
	}
	if want := []string{"", "/s/a.json", "/s/a.json+/h/rollout-t.jsonl", ""}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("stored files per action = %q, want %q", got, want)
	}
}

func TestRecreateStored(t *testing.T) {
	tmp := t.TempDir()
	dirs := storeDirs{state: filepath.Join(tmp, "state"), codexHome: filepath.Join(tmp, "codex")}
	p := &player{dirs: dirs, sessions: map[string]string{"sess_rec": "sess_live"}}
	recordPath := filepath.Join(dirs.state, "sessions", "sess_rec.json")
	rollout := filepath.Join(dirs.codexHome, "sessions", "2026", "01", "02", "rollout-t.jsonl")
	outside := filepath.Join(tmp, "elsewhere.json")
	escape := filepath.Join(dirs.state, "..", "escape.json")
	p.recreateStored([]*record.Entry{
		{Kind: record.KindStored, Path: recordPath, Exists: true, Mode: 0o600, Content: text(`{"sessionId":"sess_rec"}`)},
		{Kind: record.KindStored, Path: rollout, Exists: true, Base64: "/wAB"},
		{Kind: record.KindStored, Path: filepath.Join(dirs.state, "gone.json")},
	})
	if p.incomplete != "" {
		t.Fatalf("incomplete: %s", p.incomplete)
	}
	for path, want := range map[string]string{
		filepath.Join(dirs.state, "sessions", "sess_live.json"): `{"sessionId":"sess_live"}`,
		rollout: "\xff\x00\x01",
	} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", path, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dirs.state, "gone.json")); err == nil {
		t.Errorf("a file recorded as missing was created")
	}

	for _, path := range []string{outside, escape} {
		p.incomplete = ""
		p.recreateStored([]*record.Entry{{Kind: record.KindStored, Path: path, Exists: true, Content: text("x")}})
		if !strings.Contains(p.incomplete, "outside") {
			t.Errorf("%s: incomplete = %q, want a refusal", path, p.incomplete)
		}
		if _, err := os.Stat(filepath.Clean(path)); err == nil {
			t.Errorf("%s was written", path)
		}
	}
	p.incomplete = ""
	p.recreateStored([]*record.Entry{{Kind: record.KindStored, Path: rollout, Exists: true, Omitted: true, Size: 1 << 30}})
	if !strings.Contains(p.incomplete, "not recorded") {
		t.Errorf("omitted content: incomplete = %q", p.incomplete)
	}
}
