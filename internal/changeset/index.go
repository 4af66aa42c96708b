package changeset

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
)

// The index is a state file: read back after a restart, and read as data
// another process could have written (docs/sessions.md). DecodeIndex takes
// only what EncodeIndex writes.

// indexVersion is the format of the index; another is refused.
const indexVersion = 1

// maxIDBytes bounds a turn id (codexacp's and codex's are short).
const maxIDBytes = 128

type index struct {
	Version int    `json:"version"`
	Turns   []Turn `json:"turns"`
}

// EncodeIndex encodes turns as the index Storage keeps.
func EncodeIndex(turns []Turn) ([]byte, error) {
	if turns == nil {
		turns = []Turn{}
	}
	b, err := json.Marshal(index{Version: indexVersion, Turns: turns})
	if err != nil {
		return nil, fmt.Errorf("changeset: encoding the index: %w", err)
	}
	return append(b, '\n'), nil
}

var errBadIndex = errors.New("not an index of turns")

// DecodeIndex decodes an index EncodeIndex wrote. Anything else is an
// error: another version, a path that is not absolute and clean, a hash
// that is not 64 lowercase hex digits, a kept content without a hash, a
// path twice in one turn, a turn id that is empty or too long.
func DecodeIndex(data []byte) ([]Turn, error) {
	var ix index
	if err := json.Unmarshal(data, &ix); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadIndex, err)
	}
	if ix.Version != indexVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", errBadIndex, ix.Version, indexVersion)
	}
	for i, t := range ix.Turns {
		if err := checkTurn(t); err != nil {
			return nil, fmt.Errorf("%w: turn %d: %w", errBadIndex, i, err)
		}
	}
	return ix.Turns, nil
}

func checkTurn(t Turn) error {
	if t.ID == "" || len(t.ID) > maxIDBytes || len(t.CodexTurn) > maxIDBytes {
		return fmt.Errorf("turn id %.20q or codex turn id %.20q", t.ID, t.CodexTurn)
	}
	if t.Unrecorded < 0 {
		return fmt.Errorf("unrecorded %d", t.Unrecorded)
	}
	seen := make(map[string]bool, len(t.Files))
	for _, c := range t.Files {
		if !filepath.IsAbs(c.Path) || filepath.Clean(c.Path) != c.Path {
			return fmt.Errorf("path %q is not absolute and clean", c.Path)
		}
		if seen[c.Path] {
			return fmt.Errorf("path %q twice", c.Path)
		}
		seen[c.Path] = true
		for _, v := range []Version{c.Before, c.After} {
			if err := checkVersion(v); err != nil {
				return fmt.Errorf("%s: %w", c.Path, err)
			}
		}
		if c.After.Kept {
			return fmt.Errorf("%s: the content after a turn is not kept", c.Path)
		}
	}
	return nil
}

func checkVersion(v Version) error {
	switch {
	case !v.Exists && (v.Hash != "" || v.Size != 0 || v.Kept):
		return errors.New("a missing file with content")
	case v.Hash != "" && !ValidHash(v.Hash):
		return fmt.Errorf("hash %.70q", v.Hash)
	case v.Kept && v.Hash == "":
		return errors.New("kept content without a hash")
	case v.Size < -1 || (v.Hash != "" && v.Size < 0):
		return fmt.Errorf("size %d", v.Size)
	}
	return nil
}

// ValidHash reports whether h is a lower-hex SHA-256: the only blob names
// a Storage is asked for, so that none reaches outside its directory.
func ValidHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
