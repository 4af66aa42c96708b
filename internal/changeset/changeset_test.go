package changeset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
	"github.com/codexacp/codexacp/internal/recovery"
	"github.com/codexacp/codexacp/internal/shelledits"
)

// A panic the agent recovers from still fails the tests (internal/recovery).
func TestMain(m *testing.M) { os.Exit(recovery.Main(m)) }

// memFiles is a Files and Writer over a map: path → content (absent:
// missing). Writers check expect as the port's contract asks.
type memFiles struct {
	files  map[string]string
	errs   map[string]error // Current's error per path
	writes []string         // "write path" / "remove path", in order
}

func newMemFiles(files map[string]string) *memFiles {
	if files == nil {
		files = map[string]string{}
	}
	return &memFiles{files: files, errs: map[string]error{}}
}

func (m *memFiles) Current(_ context.Context, path string) (Version, error) {
	if err := m.errs[path]; err != nil {
		return Version{}, err
	}
	s, ok := m.files[path]
	if !ok {
		return Missing, nil
	}
	return VersionOf([]byte(s)), nil
}

func (m *memFiles) check(path string, expect Version) error {
	if cur, _ := m.Current(context.Background(), path); !cur.Same(expect) {
		return fmt.Errorf("stale: %s is %v, expected %v", path, cur, expect)
	}
	return nil
}

func (m *memFiles) WriteFile(_ context.Context, path string, content []byte, expect Version) error {
	if err := m.check(path, expect); err != nil {
		return err
	}
	m.files[path] = string(content)
	m.writes = append(m.writes, "write "+path)
	return nil
}

func (m *memFiles) RemoveFile(_ context.Context, path string, expect Version) error {
	if err := m.check(path, expect); err != nil {
		return err
	}
	delete(m.files, path)
	m.writes = append(m.writes, "remove "+path)
	return nil
}

func newLog(t *testing.T, lim Limits) (*Log, *MemStorage) {
	t.Helper()
	st := NewMemStorage()
	l, err := Open(st, lim)
	if err != nil {
		t.Fatal(err)
	}
	return l, st
}

// turn records one turn of changes: path → [before, after], "" meaning a
// missing file and "?" a present file of unknown content.
func turn(t *testing.T, l *Log, id string, changes ...[3]string) {
	t.Helper()
	snap := func(s string) Snapshot {
		switch s {
		case "":
			return Gone()
		case "?":
			return Unseen(-1)
		}
		return Content([]byte(s))
	}
	if err := l.BeginTurn(id); err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		if err := l.RecordSnapshot(c[0], snap(c[1]), snap(c[2])); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.EndTurn(); err != nil {
		t.Fatal(err)
	}
}

func TestPlan(t *testing.T) {
	type want struct {
		op    Op
		state State
	}
	tests := []struct {
		name    string
		turns   [][][3]string // per turn: path, before, after
		n       int
		current map[string]string
		errs    map[string]error
		want    map[string]want
	}{
		{
			name:    "modified, clean",
			turns:   [][][3]string{{{"/w/a", "old", "new"}}},
			n:       1,
			current: map[string]string{"/w/a": "new"},
			want:    map[string]want{"/w/a": {OpRestore, Clean}},
		},
		{
			name:    "modified, changed since: asked",
			turns:   [][][3]string{{{"/w/a", "old", "new"}}},
			n:       1,
			current: map[string]string{"/w/a": "new and the user's line"},
			want:    map[string]want{"/w/a": {OpRestore, Stale}},
		},
		{
			name:    "modified, deleted since: written back, asked",
			turns:   [][][3]string{{{"/w/a", "old", "new"}}},
			n:       1,
			current: map[string]string{},
			want:    map[string]want{"/w/a": {OpRecreate, Stale}},
		},
		{
			name:    "modified, already as before",
			turns:   [][][3]string{{{"/w/a", "old", "new"}}},
			n:       1,
			current: map[string]string{"/w/a": "old"},
			want:    map[string]want{"/w/a": {OpNone, Done}},
		},
		{
			name:    "created: removed",
			turns:   [][][3]string{{{"/w/new", "", "made"}}},
			n:       1,
			current: map[string]string{"/w/new": "made"},
			want:    map[string]want{"/w/new": {OpRemove, Clean}},
		},
		{
			name:    "created, changed since",
			turns:   [][][3]string{{{"/w/new", "", "made"}}},
			n:       1,
			current: map[string]string{"/w/new": "made, then edited"},
			want:    map[string]want{"/w/new": {OpRemove, Stale}},
		},
		{
			name:    "created, already gone",
			turns:   [][][3]string{{{"/w/new", "", "made"}}},
			n:       1,
			current: map[string]string{},
			want:    map[string]want{"/w/new": {OpNone, Done}},
		},
		{
			name:    "deleted: recreated",
			turns:   [][][3]string{{{"/w/old", "kept text", ""}}},
			n:       1,
			current: map[string]string{},
			want:    map[string]want{"/w/old": {OpRecreate, Clean}},
		},
		{
			name:    "deleted, a new file in its place since",
			turns:   [][][3]string{{{"/w/old", "kept text", ""}}},
			n:       1,
			current: map[string]string{"/w/old": "someone else's"},
			want:    map[string]want{"/w/old": {OpRestore, Stale}},
		},
		{
			name:    "content before not kept: named",
			turns:   [][][3]string{{{"/w/big", "?", "new"}}},
			n:       1,
			current: map[string]string{"/w/big": "new"},
			want:    map[string]want{"/w/big": {OpNone, Lost}},
		},
		{
			name:    "content after unknown: cannot be checked, asked",
			turns:   [][][3]string{{{"/w/bin", "old", "?"}}},
			n:       1,
			current: map[string]string{"/w/bin": "\x00\x01"},
			want:    map[string]want{"/w/bin": {OpRestore, Stale}},
		},
		{
			name:    "unreadable now: asked",
			turns:   [][][3]string{{{"/w/a", "old", "new"}}},
			n:       1,
			current: map[string]string{"/w/a": "new"},
			errs:    map[string]error{"/w/a": errors.New("editor timeout")},
			want:    map[string]want{"/w/a": {OpRestore, Stale}},
		},
		{
			name:    "unreadable now and not kept: named",
			turns:   [][][3]string{{{"/w/a", "?", "new"}}},
			n:       1,
			current: map[string]string{"/w/a": "new"},
			errs:    map[string]error{"/w/a": errors.New("editor timeout")},
			want:    map[string]want{"/w/a": {OpNone, Lost}},
		},
		{
			name:    "undo 1 of 2 leaves the first turn's change",
			turns:   [][][3]string{{{"/w/a", "v1", "v2"}}, {{"/w/a", "v2", "v3"}, {"/w/b", "", "b"}}},
			n:       1,
			current: map[string]string{"/w/a": "v3", "/w/b": "b"},
			want:    map[string]want{"/w/a": {OpRestore, Clean}, "/w/b": {OpRemove, Clean}},
		},
		{
			name:    "undo 2: back to before the first, clean against the last",
			turns:   [][][3]string{{{"/w/a", "v1", "v2"}}, {{"/w/a", "v2", "v3"}, {"/w/b", "", "b"}}},
			n:       2,
			current: map[string]string{"/w/a": "v3", "/w/b": "b"},
			want:    map[string]want{"/w/a": {OpRestore, Clean}, "/w/b": {OpRemove, Clean}},
		},
		{
			name:    "undo 2: created then deleted by the turns is already as before",
			turns:   [][][3]string{{{"/w/t", "", "tmp"}}, {{"/w/t", "tmp", ""}}},
			n:       2,
			current: map[string]string{},
			want:    map[string]want{"/w/t": {OpNone, Done}},
		},
		{
			name:    "a turn that changed nothing",
			turns:   [][][3]string{{{"/w/a", "v1", "v2"}}, {}},
			n:       1,
			current: map[string]string{"/w/a": "v2"},
			want:    map[string]want{},
		},
		{
			name:    "a change undone within its turn is not recorded",
			turns:   [][][3]string{{{"/w/a", "v1", "v2"}, {"/w/a", "v2", "v1"}}},
			n:       1,
			current: map[string]string{"/w/a": "v1"},
			want:    map[string]want{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := newLog(t, Limits{})
			for i, changes := range tc.turns {
				turn(t, l, fmt.Sprintf("t%d", i+1), changes...)
			}
			files := newMemFiles(tc.current)
			files.errs = tc.errs
			if tc.errs == nil {
				files.errs = map[string]error{}
			}
			plan, err := l.Plan(context.Background(), tc.n, files)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Turns) != tc.n || plan.Turns[0].ID != fmt.Sprintf("t%d", len(tc.turns)-tc.n+1) {
				t.Errorf("plan turns %+v", plan.Turns)
			}
			got := map[string]want{}
			for _, s := range plan.Steps {
				got[s.Path] = want{s.Op, s.State}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("steps %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPlanRefusals(t *testing.T) {
	l, _ := newLog(t, Limits{})
	_, err := l.Plan(context.Background(), 1, newMemFiles(nil))
	var ne *NotEnoughTurnsError
	if !errors.As(err, &ne) || !errors.Is(err, ErrNothingToUndo) || err.Error() != "no turn to undo" {
		t.Errorf("empty log: %v", err)
	}
	turn(t, l, "t1", [3]string{"/w/a", "1", "2"})
	if _, err := l.Plan(context.Background(), 2, newMemFiles(nil)); err == nil || err.Error() != "only 1 turns can be undone, not 2" {
		t.Errorf("n past the turns: %v", err)
	}
	if _, err := l.Plan(context.Background(), 0, newMemFiles(nil)); !errors.As(err, &ne) {
		t.Errorf("n 0: %v", err)
	}
	if err := l.BeginTurn("t2"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Plan(context.Background(), 1, newMemFiles(nil)); !errors.Is(err, ErrTurnRunning) {
		t.Errorf("during a turn: %v", err)
	}
}

// Apply restores, recreates and removes, asks before what changed since
// or is removed, writes nothing it was not allowed to, and checks each file
// at the write.
func TestApply(t *testing.T) {
	l, _ := newLog(t, Limits{})
	turn(t, l, "t1",
		[3]string{"/w/mod", "old\n", "new\n"},
		[3]string{"/w/del", "deleted text\n", ""},
		[3]string{"/w/made", "", "made\n"},
		[3]string{"/w/user", "before\n", "turn\n"},
		[3]string{"/w/race", "r1", "r2"},
	)
	files := newMemFiles(map[string]string{"/w/mod": "new\n", "/w/made": "made\n", "/w/user": "turn\nand the user's\n", "/w/race": "r2"})
	plan, err := l.Plan(context.Background(), 1, files)
	if err != nil {
		t.Fatal(err)
	}
	files.files["/w/race"] = "r3: written after the plan" // the write must notice
	var asked []string
	out := l.Apply(context.Background(), plan, files, func(s Step) bool {
		asked = append(asked, s.Path)
		return s.Path == "/w/made" // remove it; keep the user's change
	})
	if want := "[/w/made /w/user]"; fmt.Sprint(asked) != want {
		t.Errorf("asked %v, want %s", asked, want)
	}
	got := map[string]string{}
	for _, o := range out {
		switch {
		case o.Done:
			got[o.Step.Path] = "done"
		case o.Skipped != "":
			got[o.Step.Path] = "skipped: " + o.Skipped
		default:
			got[o.Step.Path] = "failed"
			if !strings.Contains(o.Err.Error(), "stale") {
				t.Errorf("%s: %v", o.Step.Path, o.Err)
			}
		}
	}
	want := map[string]string{"/w/mod": "done", "/w/del": "done", "/w/made": "done", "/w/user": "skipped: not allowed", "/w/race": "failed"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
	wantFiles := map[string]string{"/w/mod": "old\n", "/w/del": "deleted text\n", "/w/user": "turn\nand the user's\n", "/w/race": "r3: written after the plan"}
	if fmt.Sprint(files.files) != fmt.Sprint(wantFiles) {
		t.Errorf("files %v, want %v", files.files, wantFiles)
	}
	if err := l.Forget(plan); err != nil || l.Len() != 0 {
		t.Errorf("Forget: %v, %d turns left", err, l.Len())
	}
}

func TestApplyNilAllowAsksNothing(t *testing.T) {
	l, _ := newLog(t, Limits{})
	turn(t, l, "t1", [3]string{"/w/made", "", "x"})
	files := newMemFiles(map[string]string{"/w/made": "x"})
	plan, _ := l.Plan(context.Background(), 1, files)
	out := l.Apply(context.Background(), plan, files, nil)
	if len(out) != 1 || out[0].Done || len(files.writes) != 0 {
		t.Errorf("a removal without allow: %+v, writes %v", out, files.writes)
	}
}

func TestForgetChecksTheTurns(t *testing.T) {
	l, _ := newLog(t, Limits{})
	turn(t, l, "t1", [3]string{"/w/a", "1", "2"})
	plan, err := l.Plan(context.Background(), 1, newMemFiles(nil))
	if err != nil {
		t.Fatal(err)
	}
	turn(t, l, "t2", [3]string{"/w/a", "2", "3"})
	if err := l.Forget(plan); err == nil || !strings.Contains(err.Error(), "ended since") {
		t.Errorf("Forget after a new turn: %v", err)
	}
	if l.Len() != 2 {
		t.Errorf("%d turns left, want 2", l.Len())
	}
}

// Limits: contents past MaxFileBytes or the turn's budget are recorded
// without them (Lost); files past MaxTurnFiles are counted; old turns are
// forgotten past MaxTurns and MaxBytes; blobs no turn refers to go.
func TestLimits(t *testing.T) {
	t.Run("file and turn bytes", func(t *testing.T) {
		l, st := newLog(t, Limits{MaxFileBytes: 10, MaxTurnBytes: 15})
		turn(t, l, "t1",
			[3]string{"/w/big", "0123456789A", "x"}, // 11 > 10
			[3]string{"/w/a", "0123456789", "x"},    // 10: kept
			[3]string{"/w/b", "012345", "x"},        // 16 > 15: not kept
			[3]string{"/w/c", "01234", "x"},         // 15: kept
		)
		kept := map[string]bool{}
		for _, c := range l.Turns()[0].Files {
			kept[c.Path] = c.Before.Kept
		}
		if want := map[string]bool{"/w/big": false, "/w/a": true, "/w/b": false, "/w/c": true}; fmt.Sprint(kept) != fmt.Sprint(want) {
			t.Errorf("kept %v, want %v", kept, want)
		}
		if st.Blobs() != 2 {
			t.Errorf("%d blobs, want 2", st.Blobs())
		}
	})
	t.Run("turn files", func(t *testing.T) {
		l, _ := newLog(t, Limits{MaxTurnFiles: 2})
		turn(t, l, "t1", [3]string{"/w/1", "", "x"}, [3]string{"/w/2", "", "x"}, [3]string{"/w/3", "", "x"}, [3]string{"/w/1", "x", "y"}, [3]string{"/w/3", "x", "z"})
		tr := l.Turns()[0]
		if len(tr.Files) != 2 || tr.Unrecorded != 1 || tr.Files[0].After.Hash != HashOf([]byte("y")) {
			t.Errorf("turn %+v", tr)
		}
		plan, _ := l.Plan(context.Background(), 1, newMemFiles(nil))
		if plan.Unrecorded != 1 {
			t.Errorf("plan.Unrecorded %d", plan.Unrecorded)
		}
	})
	t.Run("turns", func(t *testing.T) {
		l, st := newLog(t, Limits{MaxTurns: 2})
		for i := range 4 {
			turn(t, l, fmt.Sprintf("t%d", i), [3]string{"/w/a", fmt.Sprint(i), fmt.Sprint(i + 1)})
		}
		if ts := l.Turns(); len(ts) != 2 || ts[0].ID != "t2" || st.Blobs() != 2 {
			t.Errorf("turns %+v, %d blobs", ts, st.Blobs())
		}
	})
	t.Run("session bytes", func(t *testing.T) {
		l, _ := newLog(t, Limits{MaxBytes: 25})
		for i := range 4 {
			turn(t, l, fmt.Sprintf("t%d", i), [3]string{"/w/a", strings.Repeat(fmt.Sprint(i), 10), "x"})
		}
		if ts := l.Turns(); len(ts) != 2 || ts[0].ID != "t2" {
			t.Errorf("turns %+v", ts)
		}
	})
	t.Run("index bytes", func(t *testing.T) {
		l, _ := newLog(t, Limits{MaxIndexBytes: 400})
		for i := range 4 {
			turn(t, l, fmt.Sprintf("t%d", i), [3]string{fmt.Sprintf("/w/%d", i), "", "x"})
		}
		ts := l.Turns()
		b, _ := EncodeIndex(ts)
		if len(ts) == 0 || len(ts) == 4 || len(b) > 400 || ts[len(ts)-1].ID != "t3" {
			t.Errorf("%d turns in %d bytes", len(ts), len(b))
		}
	})
	t.Run("content addressed", func(t *testing.T) {
		l, st := newLog(t, Limits{})
		same := "the same text"
		turn(t, l, "t1", [3]string{"/w/a", same, "x"}, [3]string{"/w/b", same, "y"})
		turn(t, l, "t2", [3]string{"/w/c", same, ""})
		if st.Blobs() != 1 {
			t.Errorf("%d blobs for one content, want 1", st.Blobs())
		}
	})
}

func TestRecordOutsideATurn(t *testing.T) {
	l, _ := newLog(t, Limits{})
	if err := l.RecordSnapshot("/w/a", Gone(), Content(nil)); !errors.Is(err, ErrNoTurn) {
		t.Errorf("outside a turn: %v", err)
	}
	if err := l.EndTurn(); !errors.Is(err, ErrNoTurn) {
		t.Errorf("EndTurn: %v", err)
	}
	l.BeginTurn("t1")
	if err := l.RecordSnapshot("rel/a", Gone(), Content(nil)); err == nil {
		t.Error("a relative path was recorded")
	}
	if err := l.RecordSnapshot("/w/x/../a", Gone(), Content(nil)); err != nil {
		t.Fatal(err)
	}
	l.SetCodexTurn("codex-turn-1")
	l.BeginTurn("t2") // ends t1
	l.EndTurn()
	if ts := l.Turns(); len(ts) != 2 || ts[0].Files[0].Path != "/w/a" || ts[0].CodexTurn != "codex-turn-1" {
		t.Errorf("turns %+v", ts)
	}
}

// The sources: a file tool's fsops.Change and a shell command's
// shelledits.Change.
func TestRecordSources(t *testing.T) {
	l, _ := newLog(t, Limits{})
	l.BeginTurn("t1")
	l.RecordWrite(&fsops.Change{Path: "/w/tool", Old: []byte("a\n"), New: []byte("b\n")})
	l.RecordWrite(&fsops.Change{Path: "/w/made", New: []byte("m\n"), Created: true})
	l.RecordShellEdit(shelledits.Change{Path: "/w/sed", Op: shelledits.Modified, Old: []byte("8080"), New: []byte("3000")})
	l.RecordShellEdit(shelledits.Change{Path: "/w/rm", Op: shelledits.Deleted, Old: []byte("gone")})
	l.RecordShellEdit(shelledits.Change{Path: "/w/new", Op: shelledits.Created, New: []byte("new")})
	l.RecordShellEdit(shelledits.Change{Path: "/w/png", Op: shelledits.Modified, Omitted: shelledits.OmitBinary, OldSize: 3, NewSize: 4})
	l.RecordUnseen("/w/more")
	l.EndTurn()
	got := map[string]string{}
	for _, c := range l.Turns()[0].Files {
		got[c.Path] = fmt.Sprintf("%s kept=%v", c.Kind(), c.Before.Kept)
	}
	want := map[string]string{
		"/w/tool": "modified kept=true", "/w/made": "created kept=false", "/w/sed": "modified kept=true",
		"/w/rm": "deleted kept=true", "/w/new": "created kept=false", "/w/png": "modified kept=false",
		"/w/more": "modified kept=false",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("recorded %v\nwant %v", got, want)
	}
}

// A binary file a command changed is restorable when internal/shelledits
// reported its contents (OldBytes, NewBytes): /undo puts its bytes back.
// Without them it is recorded, named as not restorable.
func TestRecordShellEditBinary(t *testing.T) {
	const old, new = "\x00\x01\x02", "\x00\x03"
	for _, tc := range []struct {
		name   string
		change shelledits.Change
		now    map[string]string // the files when undone
		want   string            // the step and the files after the undo
	}{
		{name: "modified", now: map[string]string{"/w/b": new},
			change: shelledits.Change{Op: shelledits.Modified, Omitted: shelledits.OmitBinary, OldBytes: []byte(old), NewBytes: []byte(new)},
			want:   `restore clean; map["/w/b":"\x00\x01\x02"]`},
		{name: "deleted", now: map[string]string{},
			change: shelledits.Change{Op: shelledits.Deleted, Omitted: shelledits.OmitBinary, OldBytes: []byte(old)},
			want:   `recreate clean; map["/w/b":"\x00\x01\x02"]`},
		{name: "created", now: map[string]string{"/w/b": new},
			change: shelledits.Change{Op: shelledits.Created, Omitted: shelledits.OmitBinary, NewBytes: []byte(new)},
			want:   `remove clean; map[]`},
		{name: "text turned binary", now: map[string]string{"/w/b": new},
			change: shelledits.Change{Op: shelledits.Modified, Omitted: shelledits.OmitBinary, OldBytes: []byte("text\n"), NewBytes: []byte(new)},
			want:   `restore clean; map["/w/b":"text\n"]`},
		{name: "changed since", now: map[string]string{"/w/b": "\x00mine"},
			change: shelledits.Change{Op: shelledits.Modified, Omitted: shelledits.OmitBinary, OldBytes: []byte(old), NewBytes: []byte(new)},
			want:   `restore changed since; map["/w/b":"\x00\x01\x02"]`},
		{name: "after not reported", now: map[string]string{"/w/b": new},
			change: shelledits.Change{Op: shelledits.Modified, Omitted: shelledits.OmitBinary, OldBytes: []byte(old), NewSize: 2},
			want:   `restore changed since; map["/w/b":"\x00\x01\x02"]`},
		{name: "before not reported", now: map[string]string{"/w/b": new},
			change: shelledits.Change{Op: shelledits.Modified, Omitted: shelledits.OmitBinary, OldSize: 3, NewBytes: []byte(new)},
			want:   `none content before not kept; map["/w/b":"\x00\x03"]`},
		{name: "large: bytes ignored", now: map[string]string{"/w/b": new},
			change: shelledits.Change{Op: shelledits.Modified, Omitted: shelledits.OmitLarge, OldBytes: []byte(old), NewBytes: []byte(new)},
			want:   `none content before not kept; map["/w/b":"\x00\x03"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := newLog(t, Limits{})
			l.BeginTurn("t1")
			tc.change.Path = "/w/b"
			if err := l.RecordShellEdit(tc.change); err != nil {
				t.Fatal(err)
			}
			l.EndTurn()
			files := newMemFiles(tc.now)
			plan, err := l.Plan(context.Background(), 1, files)
			if err != nil {
				t.Fatal(err)
			}
			l.Apply(context.Background(), plan, files, func(Step) bool { return true })
			got := fmt.Sprintf("%s %s; %q", plan.Steps[0].Op, plan.Steps[0].State, files.files)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// FsopsFiles sees the files as the file tools do: through the port.
func TestFsopsFiles(t *testing.T) {
	mem := fsopstest.NewMemFiles()
	mem.Set("/w/a", "text")
	f := FsopsFiles{Files: mem}
	ctx := context.Background()
	if v, err := f.Current(ctx, "/w/a"); err != nil || !v.Same(VersionOf([]byte("text"))) {
		t.Errorf("a file: %v, %v", v, err)
	}
	if v, err := f.Current(ctx, "/w/none"); err != nil || v.Exists {
		t.Errorf("a missing file: %v, %v", v, err)
	}
	mem.FailRead("/w/a", &fsops.Error{Code: fsops.CodePermission, Message: "denied"})
	if _, err := f.Current(ctx, "/w/a"); err == nil {
		t.Error("a read error was not reported")
	}
}

// Dir keeps the log across a restart, refuses what it did not write, and
// is removed and copied whole.
func TestDir(t *testing.T) {
	sessions := t.TempDir()
	path := filepath.Join(sessions, "sess_1"+DirSuffix)
	l, err := Open(NewDir(path, Limits{}, DefaultStoreMax), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	turn(t, l, "t1", [3]string{"/w/a", "before", "after"}, [3]string{"/w/b", "", "new"})
	turn(t, l, "t2", [3]string{"/w/a", "after", "again"})

	again, err := Open(NewDir(path, Limits{}, 0), Limits{})
	if err != nil || fmt.Sprint(again.Turns()) != fmt.Sprint(l.Turns()) {
		t.Fatalf("reopened: %v\n%+v\nwant %+v", err, again.Turns(), l.Turns())
	}
	files := newMemFiles(map[string]string{"/w/a": "again", "/w/b": "new"})
	plan, err := again.Plan(context.Background(), 2, files)
	if err != nil {
		t.Fatal(err)
	}
	again.Apply(context.Background(), plan, files, func(Step) bool { return true })
	if fmt.Sprint(files.files) != "map[/w/a:before]" {
		t.Errorf("after undo 2: %v", files.files)
	}

	fork := filepath.Join(sessions, "sess_2"+DirSuffix)
	if err := NewDir(path, Limits{}, 0).CopyTo(fork); err != nil {
		t.Fatal(err)
	}
	forked, err := Open(NewDir(fork, Limits{}, 0), Limits{})
	if err != nil || len(forked.Turns()) != 2 {
		t.Fatalf("fork: %v, %d turns", err, len(forked.Turns()))
	}
	if err := again.Forget(plan); err != nil {
		t.Fatal(err)
	}
	if blobs, _ := os.ReadDir(filepath.Join(path, blobsName)); len(blobs) != 0 {
		t.Errorf("blobs left after forgetting every turn: %d", len(blobs))
	}
	if blobs, _ := os.ReadDir(filepath.Join(fork, blobsName)); len(blobs) != 2 {
		t.Errorf("the fork's blobs: %d, want 2", len(blobs))
	}
	if err := NewDir(path, Limits{}, 0).Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removed dir: %v", err)
	}
}

// What a Dir reads is data: a blob whose content is not its hash is not
// written back; an index that is not one is an error with an empty log;
// an oversized index is refused unread.
func TestDirData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s"+DirSuffix)
	l, _ := Open(NewDir(path, Limits{}, 0), Limits{})
	turn(t, l, "t1", [3]string{"/w/a", "before", "after"})
	blob := filepath.Join(path, blobsName, HashOf([]byte("before")))
	if err := os.WriteFile(blob, []byte("planted"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := newMemFiles(map[string]string{"/w/a": "after"})
	plan, _ := l.Plan(context.Background(), 1, files)
	out := l.Apply(context.Background(), plan, files, nil)
	if out[0].Done || out[0].Err == nil || !strings.Contains(out[0].Err.Error(), "does not match") || files.files["/w/a"] != "after" {
		t.Errorf("a planted blob: %+v, file %q", out[0], files.files["/w/a"])
	}

	// Keeping the same content again replaces a planted blob of its size.
	if err := os.WriteFile(blob, []byte("BEFORE"), 0o600); err != nil {
		t.Fatal(err)
	}
	turn(t, l, "t2", [3]string{"/w/b", "before", "b"})
	if b, _ := os.ReadFile(blob); string(b) != "before" {
		t.Errorf("the planted blob was kept: %q", b)
	}

	for name, content := range map[string][]byte{
		"not json":     []byte("{"),
		"relative":     []byte(`{"version":1,"turns":[{"id":"t","files":[{"path":"w/a","before":{},"after":{}}]}]}`),
		"oversized":    bytes.Repeat([]byte(" "), 300<<10),
		"other format": []byte(`{"version":2,"turns":[]}`),
	} {
		if err := os.WriteFile(filepath.Join(path, indexName), content, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := Open(NewDir(path, Limits{}, 0), Limits{})
		if err == nil || l == nil || l.Len() != 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// PruneStore removes the least recently written Dirs past the bound,
// never the one being created.
func TestPruneStore(t *testing.T) {
	sessions := t.TempDir()
	big := strings.Repeat("x", 1000)
	for i, id := range []string{"a", "b", "c"} {
		l, _ := Open(NewDir(filepath.Join(sessions, id+DirSuffix), Limits{}, 0), Limits{})
		turn(t, l, "t", [3]string{"/w/f", big + fmt.Sprint(i), "y"})
	}
	// The oldest by index time: a, then b.
	for i, id := range []string{"a", "b", "c"} {
		tm := testTime(i)
		os.Chtimes(filepath.Join(sessions, id+DirSuffix, indexName), tm, tm)
	}
	PruneStore(sessions, 3000, filepath.Join(sessions, "a"+DirSuffix))
	var left []string
	entries, _ := os.ReadDir(sessions)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := "[a.undo c.undo]"; fmt.Sprint(left) != want {
		t.Errorf("left %v, want %s", left, want)
	}
}

func testTime(i int) time.Time { return time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC) }

// The file tools record from their calls' goroutines while shell edits
// record from the event loop (go test -race).
func TestConcurrentRecord(t *testing.T) {
	l, _ := newLog(t, Limits{})
	l.BeginTurn("t1")
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 50 {
				p := fmt.Sprintf("/w/%d-%d", g, i)
				l.RecordSnapshot(p, Content([]byte(p)), Content([]byte(p+"!")))
				l.Len()
			}
		}()
	}
	for range 4 {
		<-done
	}
	l.EndTurn()
	if ts := l.Turns(); len(ts[0].Files) != 200 {
		t.Errorf("%d files recorded, want 200", len(ts[0].Files))
	}
}

// A link planted in place of the change-set directory or its blobs is
// neither written through nor pruned through: the files it points to stay.
func TestDirRefusesLinks(t *testing.T) {
	for _, where := range []string{"dir", "blobs"} {
		t.Run(where, func(t *testing.T) {
			root := t.TempDir()
			victim := filepath.Join(root, "project")
			os.MkdirAll(filepath.Join(victim, blobsName), 0o755)
			os.WriteFile(filepath.Join(victim, blobsName, "keep.go"), []byte("package x"), 0o644)
			os.WriteFile(filepath.Join(victim, "keep.go"), []byte("package x"), 0o644)
			path := filepath.Join(root, "s"+DirSuffix)
			if where == "dir" {
				if err := os.Symlink(victim, path); err != nil {
					t.Skip("no symlinks:", err)
				}
			} else {
				os.Mkdir(path, 0o700)
				if err := os.Symlink(victim, filepath.Join(path, blobsName)); err != nil {
					t.Skip("no symlinks:", err)
				}
			}
			l, _ := Open(NewDir(path, Limits{}, 0), Limits{})
			l.BeginTurn("t1")
			if err := l.RecordSnapshot("/w/a", Content([]byte("x")), Content([]byte("y"))); err == nil {
				t.Error("a blob was kept through a link")
			}
			if err := l.EndTurn(); err == nil {
				t.Error("the index was saved through a link")
			}
			entries, _ := os.ReadDir(filepath.Join(victim, blobsName))
			top, _ := os.ReadDir(victim)
			if len(entries) != 1 || len(top) != 2 {
				t.Errorf("the link's target changed: blobs %v, top %v", entries, top)
			}
		})
	}
}

// EndCodexTurn keeps a turn codex named, or one that changed files; a turn
// without either is none of the thread's and is not kept.
func TestEndCodexTurn(t *testing.T) {
	l, _ := newLog(t, Limits{})
	p := filepath.Join(string(filepath.Separator), "w", "a.txt")
	for _, tc := range []struct {
		name  string
		codex string
		write bool
		kept  bool
	}{
		{"failed before codex started it", "", false, false},
		{"codex's turn without edits", "tu-1", false, true},
		{"edits of a turn codex did not name", "", true, true},
	} {
		before := l.Len()
		if err := l.BeginTurn(tc.name); err != nil {
			t.Fatal(err)
		}
		if tc.codex != "" {
			l.SetCodexTurn(tc.codex)
		}
		if tc.write {
			l.RecordWrite(&fsops.Change{Path: p, Old: []byte("a"), New: []byte("b")})
		}
		kept, err := l.EndCodexTurn()
		if err != nil || kept != tc.kept || (l.Len() > before) != tc.kept {
			t.Errorf("%s: kept %v, %v (turns %d → %d); want kept %v", tc.name, kept, err, before, l.Len(), tc.kept)
		}
	}
	if _, err := l.EndCodexTurn(); !errors.Is(err, ErrNoTurn) {
		t.Errorf("no turn running: %v", err)
	}
}
