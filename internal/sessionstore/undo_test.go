package sessionstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/codexacp/codexacp/internal/changeset"
)

// A session's change sets live next to its record: copied for a fork,
// removed with the session, invisible to List.
func TestUndoDir(t *testing.T) {
	dir := t.TempDir()
	st := New(dir, discardLogger())
	if err := st.Save(Record{SessionID: sidHere, Cwd: "/w", Mode: "auto"}); err != nil {
		t.Fatal(err)
	}
	undo, err := st.Undo(sidHere)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, sidHere+".undo"); undo.Path() != want {
		t.Errorf("undo dir %s, want %s", undo.Path(), want)
	}
	log, err := changeset.Open(undo, changeset.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	log.BeginTurn("t1")
	log.RecordSnapshot("/w/a", changeset.Content([]byte("before")), changeset.Content([]byte("after")))
	if err := log.EndTurn(); err != nil {
		t.Fatal(err)
	}
	if recs, err := st.List(""); err != nil || len(recs) != 1 {
		t.Errorf("List with a change-set dir: %d records, %v", len(recs), err)
	}

	if err := st.Save(Record{SessionID: sidElsewhere, Cwd: "/w", Mode: "auto"}); err != nil {
		t.Fatal(err)
	}
	if err := st.CopyUndo(sidHere, sidElsewhere); err != nil {
		t.Fatal(err)
	}
	forkDir, _ := st.Undo(sidElsewhere)
	fork, err := changeset.Open(forkDir, changeset.Limits{})
	if err != nil || fork.Len() != 1 {
		t.Fatalf("the fork's change sets: %d turns, %v", fork.Len(), err)
	}
	if ts := fork.Turns(); ts[0].Files[0].Path != "/w/a" || !ts[0].Files[0].Before.Kept {
		t.Errorf("the fork's turn %+v", ts[0])
	}
	if err := st.CopyUndo(sidGone, sidHere); err != nil {
		t.Errorf("copying none: %v", err)
	}

	if err := st.Remove(sidHere); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(undo.Path()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("change sets left after Remove: %v", err)
	}
	if _, err := os.Lstat(forkDir.Path()); err != nil {
		t.Errorf("the fork's change sets went with its source: %v", err)
	}
	for _, id := range malformedSessionIDs {
		if _, err := st.Undo(id); !errors.Is(err, ErrBadSessionID) {
			t.Errorf("Undo(%q): %v", id, err)
		}
	}
}
