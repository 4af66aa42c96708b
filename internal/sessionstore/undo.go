package sessionstore

import (
	"fmt"
	"strings"

	"github.com/codexacp/codexacp/internal/changeset"
)

// A session's change sets for /undo (internal/changeset, docs/undo.md)
// live in a directory next to its record, <id>.undo: removed with the
// record (Remove), copied for a fork (CopyUndo). List skips directories.

// UndoDirPath is the change-set directory of the record at recordPath.
func UndoDirPath(recordPath string) string {
	return strings.TrimSuffix(recordPath, ".json") + changeset.DirSuffix
}

// Undo returns the session's change-set storage. Creating it prunes the
// store's change sets to changeset.DefaultStoreMax together.
func (st *Store) Undo(id string) (*changeset.Dir, error) {
	p, err := st.Path(id)
	if err != nil {
		return nil, err
	}
	return changeset.NewDir(UndoDirPath(p), changeset.Limits{}, changeset.DefaultStoreMax), nil
}

// CopyUndo gives the session to the change sets of the session from: a
// fork, which can undo the turns it shares with its source (its files are
// the same files). None to copy is no error.
func (st *Store) CopyUndo(from, to string) error {
	src, err := st.Undo(from)
	if err != nil {
		return err
	}
	dst, err := st.Path(to)
	if err != nil {
		return err
	}
	if err := src.CopyTo(UndoDirPath(dst)); err != nil {
		return fmt.Errorf("session store: copying the change sets: %w", err)
	}
	return nil
}
