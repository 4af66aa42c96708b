// Package changeset keeps what each turn of a session did to files, so that
// /undo can take turns back: for every file a turn changed, its content
// before the turn's first change and its hash after the turn's last, with
// creations and deletions. Changes come from the file tools' writes (old
// and new text) and from shell edits (internal/shelledits reports each
// command's changes with the text before); a turn is the span between
// BeginTurn and EndTurn.
//
// Contents are kept in a Storage as content-addressed blobs (one blob per
// distinct content, named by its SHA-256), the turns in a small JSON index;
// Dir keeps both in a directory next to the session's record, within the
// bounds of Limits (docs/undo.md). Plan says, for the last n turns, what
// to do with each file given its current content: restore it, bring back a
// file the turns deleted, remove one they created, or ask first because it
// changed since (the file tools' stale-hash rule). Apply carries a plan out
// through a Writer port, Forget forgets the undone turns; Undo does it all
// in an order that never pretends (codex forgets the turns before any file
// is written) and Result.Summary says what it did.
//
// The package is pure: it knows nothing of ACP, MCP or codex; files are
// looked at and written through ports.
package changeset

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Limits bound what a Log keeps. Zero fields take DefaultLimits'.
type Limits struct {
	// MaxFileBytes is the largest content kept for one file: a file larger
	// before a turn is recorded with its hash only and cannot be restored.
	MaxFileBytes int64
	// MaxTurnFiles is the number of files recorded per turn; further files
	// are counted (Turn.Unrecorded), not recorded.
	MaxTurnFiles int
	// MaxTurnBytes bounds the contents a turn keeps (new blobs); past it,
	// files are recorded with their hash only.
	MaxTurnBytes int64
	// MaxTurns is the number of turns kept: older ones are forgotten, and
	// cannot be undone.
	MaxTurns int
	// MaxBytes bounds the contents the session keeps (distinct blobs of
	// all its turns): the oldest turns are forgotten to fit.
	MaxBytes int64
	// MaxIndexBytes bounds the encoded index of turns (a state file, read
	// back as data): the oldest turns are forgotten to fit.
	MaxIndexBytes int
}

// DefaultLimits are the limits codexacp uses (docs/undo.md).
func DefaultLimits() Limits {
	return Limits{
		MaxFileBytes:  4 << 20,
		MaxTurnFiles:  500,
		MaxTurnBytes:  16 << 20,
		MaxTurns:      50,
		MaxBytes:      32 << 20,
		MaxIndexBytes: 256 << 10,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxTurnFiles <= 0 {
		l.MaxTurnFiles = d.MaxTurnFiles
	}
	if l.MaxTurnBytes <= 0 {
		l.MaxTurnBytes = d.MaxTurnBytes
	}
	if l.MaxTurns <= 0 {
		l.MaxTurns = d.MaxTurns
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxIndexBytes <= 0 {
		l.MaxIndexBytes = d.MaxIndexBytes
	}
	return l
}

// Version is a file's state at one point: missing, or present with the
// hash and size of its content. Hash is "" for a file present whose
// content was not seen (a shell edit of a binary or large file); Kept says
// its content is in the Storage.
type Version struct {
	Exists bool   `json:"exists,omitempty"`
	Hash   string `json:"hash,omitempty"` // lower-hex SHA-256 of the content
	Size   int64  `json:"size,omitempty"` // bytes; -1 when not known
	Kept   bool   `json:"kept,omitempty"`
}

// Missing is the Version of a file that does not exist.
var Missing = Version{}

// VersionOf is the Version of content (not Kept).
func VersionOf(content []byte) Version {
	return Version{Exists: true, Hash: HashOf(content), Size: int64(len(content))}
}

// Known reports whether v is missing or of a known content.
func (v Version) Known() bool { return !v.Exists || v.Hash != "" }

// Same reports whether a and b are known to be the same state.
func (v Version) Same(o Version) bool {
	return v.Known() && o.Known() && v.Exists == o.Exists && v.Hash == o.Hash
}

func (v Version) String() string {
	switch {
	case !v.Exists:
		return "missing"
	case v.Hash == "":
		return fmt.Sprintf("unknown content (%d bytes)", v.Size)
	}
	return fmt.Sprintf("%d bytes, hash %s", v.Size, v.Hash)
}

// HashOf is the lower-hex SHA-256 of content: the file tools' hash.
func HashOf(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// Snapshot is a file's content as a change source saw it.
type Snapshot struct {
	Exists bool
	// Content is the file's bytes when Known.
	Content []byte
	// Known: Content is the content. A present file whose content the
	// source did not keep (too large, binary, past its limits) is !Known.
	Known bool
	// Size of a file !Known; -1 when not known either.
	Size int64
}

// Gone is the Snapshot of a missing file.
func Gone() Snapshot { return Snapshot{} }

// Content is the Snapshot of a file holding b.
func Content(b []byte) Snapshot { return Snapshot{Exists: true, Content: b, Known: true} }

// Unseen is the Snapshot of a present file of size bytes (-1: unknown)
// whose content was not seen.
func Unseen(size int64) Snapshot { return Snapshot{Exists: true, Size: size} }

// FileChange is what a turn did to one file.
type FileChange struct {
	Path   string  `json:"path"`   // absolute, clean
	Before Version `json:"before"` // before the turn's first change
	After  Version `json:"after"`  // after its last
}

// Kind names what the change did: "created", "deleted" or "modified".
func (c FileChange) Kind() string {
	switch {
	case !c.Before.Exists:
		return "created"
	case !c.After.Exists:
		return "deleted"
	}
	return "modified"
}

// Turn is one turn's changes.
type Turn struct {
	// ID is the caller's name of the turn (codexacp's turn id).
	ID string `json:"id"`
	// CodexTurn is codex's id of the turn (thread/revert's beforeTurnId);
	// "" when not known (codex exec prints none).
	CodexTurn string `json:"codexTurn,omitempty"`
	// Files are the files it changed, by path.
	Files []FileChange `json:"files,omitempty"`
	// Unrecorded counts files it changed past MaxTurnFiles.
	Unrecorded int `json:"unrecorded,omitempty"`
}

// Storage keeps a Log's blobs and index: Dir on disk, NewMemStorage in
// memory.
type Storage interface {
	// PutBlob keeps content under its hash (HashOf(content)); putting a
	// blob already kept is no error.
	PutBlob(hash string, content []byte) error
	// Blob returns the content kept under hash.
	Blob(hash string) ([]byte, error)
	// SaveIndex replaces the stored index.
	SaveIndex(index []byte) error
	// Index returns the stored index; nil and no error when there is none.
	Index() ([]byte, error)
	// Prune removes every blob whose hash keep does not hold.
	Prune(keep map[string]bool) error
}

// Errors of a Log.
var (
	ErrTurnRunning   = errors.New("a turn is running")
	ErrNoTurn        = errors.New("no turn is running")
	ErrNothingToUndo = errors.New("no turn to undo")
)

// Log is a session's change sets, oldest turn first, and the turn being
// recorded. Its methods are safe for concurrent use: the file tools record
// from their calls' goroutines, shell edits from the event loop.
type Log struct {
	lim   Limits
	store Storage

	mu    sync.Mutex
	turns []Turn // ended turns, oldest first
	cur   *openTurn
}

// openTurn is the turn being recorded.
type openTurn struct {
	Turn
	index      map[string]int  // path → Files index
	unrecorded map[string]bool // paths past MaxTurnFiles, counted once
	keptBytes  int64           // contents put during the turn
}

// Open returns the Log kept in store (empty when it holds none). A stored
// index that does not decode is an error, with an empty Log that can be
// used: its turns are lost, the rest of the session is not.
func Open(store Storage, lim Limits) (*Log, error) {
	l := &Log{lim: lim.withDefaults(), store: store}
	data, err := store.Index()
	if err != nil {
		return l, fmt.Errorf("changeset: %w", err)
	}
	if data == nil {
		return l, nil
	}
	turns, err := DecodeIndex(data)
	if err != nil {
		return l, fmt.Errorf("changeset: %w", err)
	}
	l.turns = turns
	return l, nil
}

// Turns returns the ended turns, oldest first: those that can be undone.
func (l *Log) Turns() []Turn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.turns)
}

// Len is the number of turns that can be undone (/status).
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.turns)
}

// BeginTurn starts recording turn id. A turn not ended is ended first.
func (l *Log) BeginTurn(id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.cur != nil {
		err = l.endLocked()
	}
	l.cur = &openTurn{Turn: Turn{ID: id}, index: map[string]int{}, unrecorded: map[string]bool{}}
	return err
}

// SetCodexTurn names codex's id of the running turn.
func (l *Log) SetCodexTurn(id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil {
		return ErrNoTurn
	}
	l.cur.CodexTurn = id
	return nil
}

// RecordSnapshot notes that the running turn changed path from before to after.
// The first change of a path in a turn gives its Before, the last its
// After. The content before is kept (a blob) within the limits; past them
// the file is recorded without it and cannot be restored. An error says
// the content could not be kept; the change is recorded all the same.
func (l *Log) RecordSnapshot(path string, before, after Snapshot) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("changeset: path %q is not absolute", path)
	}
	path = filepath.Clean(path)
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.cur
	if t == nil {
		return ErrNoTurn
	}
	if i, ok := t.index[path]; ok {
		t.Files[i].After = versionOf(after)
		return nil
	}
	if len(t.Files) >= l.lim.MaxTurnFiles {
		if !t.unrecorded[path] {
			t.unrecorded[path] = true
			t.Unrecorded++
		}
		return nil
	}
	c := FileChange{Path: path, Before: versionOf(before), After: versionOf(after)}
	var err error
	if before.Exists && before.Known {
		size := int64(len(before.Content))
		switch {
		case size > l.lim.MaxFileBytes:
		case t.keptBytes+size > l.lim.MaxTurnBytes:
		default:
			if err = l.store.PutBlob(c.Before.Hash, before.Content); err == nil {
				c.Before.Kept = true
				t.keptBytes += size
			} else {
				err = fmt.Errorf("changeset: keeping %s: %w", path, err)
			}
		}
	}
	t.index[path] = len(t.Files)
	t.Files = append(t.Files, c)
	return err
}

func versionOf(s Snapshot) Version {
	switch {
	case !s.Exists:
		return Missing
	case !s.Known:
		size := s.Size
		if size < 0 {
			size = -1
		}
		return Version{Exists: true, Size: size}
	}
	return VersionOf(s.Content)
}

// EndTurn ends the running turn and stores the log: files the turn left
// as they were are dropped, and the oldest turns are forgotten past the
// limits. The turn is kept (it can be undone) even when storing fails.
func (l *Log) EndTurn() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil {
		return ErrNoTurn
	}
	return l.endLocked()
}

// EndCodexTurn is EndTurn for a caller that names codex's turns
// (SetCodexTurn): a turn codex never named that changed no file is not
// kept. Codex has no such turn in the thread (it failed before codex
// started it, or ran in a thread of its own, as codex exec's reviews do),
// and keeping it would make the log's last turns differ from the
// thread's, which an undo checks (docs/undo.md). It reports whether the
// turn was kept.
func (l *Log) EndCodexTurn() (kept bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil {
		return false, ErrNoTurn
	}
	if t := l.cur; t.CodexTurn == "" && t.Unrecorded == 0 &&
		!slices.ContainsFunc(t.Files, func(c FileChange) bool { return !c.Before.Same(c.After) }) {
		l.cur = nil
		return false, nil
	}
	return true, l.endLocked()
}

func (l *Log) endLocked() error {
	t := l.cur.Turn
	l.cur = nil
	t.Files = slices.DeleteFunc(t.Files, func(c FileChange) bool { return c.Before.Same(c.After) })
	slices.SortFunc(t.Files, func(a, b FileChange) int { return strings.Compare(a.Path, b.Path) })
	l.turns = append(l.turns, t)
	return l.saveLocked()
}

// saveLocked trims the turns to the limits, stores the index and prunes
// the blobs no turn refers to.
func (l *Log) saveLocked() error {
	if over := len(l.turns) - l.lim.MaxTurns; over > 0 {
		l.turns = l.turns[over:]
	}
	for len(l.turns) > 1 && keptBytes(l.turns) > l.lim.MaxBytes {
		l.turns = l.turns[1:]
	}
	var index []byte
	for {
		var err error
		index, err = EncodeIndex(l.turns)
		if err != nil {
			return err
		}
		if len(index) <= l.lim.MaxIndexBytes || len(l.turns) == 0 {
			break
		}
		l.turns = l.turns[1:]
	}
	if err := l.store.SaveIndex(index); err != nil {
		return fmt.Errorf("changeset: %w", err)
	}
	if err := l.store.Prune(referenced(l.turns, l.cur)); err != nil {
		return fmt.Errorf("changeset: %w", err)
	}
	return nil
}

// keptBytes is the size of the distinct contents turns keep.
func keptBytes(turns []Turn) int64 {
	seen := map[string]bool{}
	var n int64
	for _, t := range turns {
		for _, c := range t.Files {
			if c.Before.Kept && !seen[c.Before.Hash] {
				seen[c.Before.Hash] = true
				n += c.Before.Size
			}
		}
	}
	return n
}

// referenced are the blobs the turns (and the running one) refer to.
func referenced(turns []Turn, cur *openTurn) map[string]bool {
	keep := map[string]bool{}
	add := func(t Turn) {
		for _, c := range t.Files {
			if c.Before.Kept {
				keep[c.Before.Hash] = true
			}
		}
	}
	for _, t := range turns {
		add(t)
	}
	if cur != nil {
		add(cur.Turn)
	}
	return keep
}
