// Package fsops is the file-tool engine behind the tools codexacp gives Codex:
// read, write, string edits, multi-edits and hash-checked line edits, with
// unified diffs. It is pure: it knows nothing of ACP or MCP. All file access
// goes through the Files port, so the same engine edits an editor's buffers
// (through ACP fs methods) or the local disk.
package fsops

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Error codes returned to the model. They come from the seed contracts
// (listed in docs/fsops.md, Error codes); the numbers are part of the
// tool contract.
const (
	CodeNotFound       = -32001 // file or parent directory not found
	CodePermission     = -32002 // permission denied, read-only, outside workspace, rejected
	CodeIsDirectory    = -32003 // path is a directory
	CodeBinary         = -32004 // NUL bytes or invalid UTF-8
	CodeDiskFull       = -32005 // no space left
	CodeNotRegular     = -32006 // a device, FIFO or socket: reading it could block or never end
	CodeTooLarge       = -32007 // over a size limit: the editor's message size, MaxEditBytes, MaxDiffLines
	CodeStringNotFound = -32010 // old string not found
	CodeMatchCount     = -32011 // old string found a wrong number of times
	CodeConflict       = -32012 // multi-edit: a match partly overlaps an earlier edit's text
	CodeStale          = -32013 // expected hash does not match the file
	CodeOldMismatch    = -32014 // line tools: old is not the content of the lines
	CodeAnchorMismatch = -32015 // line tools: anchor is not the content of the line
	// CodeInvalidRequest is -32600, which JSON-RPC names "Invalid Request".
	// The seeds use it for arguments the tool rejects (relative path,
	// identical strings, empty edits, bad range), where JSON-RPC would say
	// -32602 Invalid params; the number is the seeds' and part of the tool
	// contract, so it stays, under its true name.
	CodeInvalidRequest = -32600
)

// Error is a tool failure the model can act on: a seed code, the seed's
// message, and a hint that says what to do next.
type Error struct {
	Code    int
	Message string
	Hint    string
	Err     error // underlying cause, if any (not shown to the model)
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s (code %d): %v", e.Message, e.Code, e.Err)
	}
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

func (e *Error) Unwrap() error { return e.Err }

// Files is the port through which the engine reads and writes files.
// An instance belongs to one session (an editor adapter is bound to the
// session whose buffers it reads). Paths are absolute and clean.
//
// Errors should be *Error with CodeNotFound, CodePermission, CodeIsDirectory
// or CodeDiskFull where the cause is known; other errors are reported as
// they are.
type Files interface {
	// ReadFile returns the file's current content (for an editor: the buffer,
	// unsaved changes included).
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// WriteFile replaces the file's content, creating the file if needed.
	// The parent directory must exist (see DirMaker). The path was resolved; a write must
	// not follow a symlink that appeared in it since (LocalFiles refuses).
	WriteFile(ctx context.Context, path string, data []byte) error
	// Stat reports whether path exists and whether it is a directory. A
	// missing path is not an error: it returns FileInfo{} and nil.
	Stat(ctx context.Context, path string) (FileInfo, error)
	// Resolve returns the location path leads to (symlinks resolved; see
	// ResolvePath). The engine resolves every path before it locks, reads
	// or writes, and passes only resolved paths to the other methods.
	Resolve(ctx context.Context, path string) (string, error)
}

// StreamOpener is implemented by ports that can open a file as stored for
// reading, so that read_text_file reads only as far as the lines it
// returns (and, for a file up to MaxEditBytes, hashes the rest without
// keeping it), whatever the file's size.
type StreamOpener interface {
	// OpenStream opens path for reading and returns its size when opened
	// (fstat of the descriptor). It never blocks (a FIFO is refused). An
	// error wrapping ErrNotStreamed means the path is to be read whole with
	// ReadFile (an editor's buffer, which may differ from the disk).
	OpenStream(ctx context.Context, path string) (io.ReadCloser, int64, error)
}

// ErrNotStreamed is returned (wrapped) by StreamOpener.OpenStream for a
// path the port reads only whole.
var ErrNotStreamed = errors.New("the file is read whole through the port")

// PartReader is implemented by ports that cannot read some files whole
// (ReadFile answers CodeTooLarge) but can read them by lines: an editor
// whose messages are limited in size. read_text_file then plans on the
// stored file, streamed, and reads only the lines it returns.
type PartReader interface {
	// OpenStored opens the file as stored (on disk), as
	// StreamOpener.OpenStream does.
	OpenStored(ctx context.Context, path string) (io.ReadCloser, int64, error)
	// ReadLines returns count lines from line start (1-based).
	ReadLines(ctx context.Context, path string, start, count int) ([]byte, error)
}

// DirMaker is implemented by ports that can create directories. The
// engine uses it only for write_text_file with create_parents, after the
// write was approved (BeforeWrite), and only for the directories the
// change lists in NewDirs. A port without it cannot create directories: such
// a write fails before anything is asked (CannotCreateDirsError).
type DirMaker interface {
	// MkdirAll creates dir and every missing directory above it, like
	// os.MkdirAll, but only inside the port's workspace roots: dir is
	// resolved (no symlink in it), and a directory outside every root, or a
	// component that is not a plain directory when it is reached (a symlink
	// swapped in, a file), is refused with an *Error and nothing more is
	// created. Existing directories are fine (it is idempotent).
	MkdirAll(ctx context.Context, dir string) error
}

// FileInfo is what the engine needs to know about a path before writing.
type FileInfo struct {
	Exists bool
	IsDir  bool
}

// Change is a write the engine has computed and is about to make. It is
// shown to a BeforeWrite hook (which may veto it) and kept for reporting.
type Change struct {
	Tool    string // tool name, e.g. "edit_text_file"
	Path    string // absolute, clean
	Old     []byte // content before; nil when the file is created
	New     []byte // content after
	Created bool   // the file did not exist
	// NewDirs are the directories the write creates before the file
	// (write_text_file with create_parents), outermost first; they are
	// created only if the change is approved.
	NewDirs []string
	Diff    string // unified diff Old → New, headers "--- path" / "+++ path"
	// ChangedLines are the 1-based lines in New where each changed region
	// starts (for editor "follow along" locations). For a pure deletion, the
	// line that now stands where the deleted text was.
	ChangedLines []int
}

// BeforeWrite is called with a computed change after validation and before
// anything is written. A non-nil error vetoes the write: nothing is written
// and the error is returned by the tool (an *Error is returned as it is; any
// other error is wrapped as CodePermission "Permission denied: {path}").
// A nil BeforeWrite allows every write.
type BeforeWrite func(ctx context.Context, c *Change) error

// ReadParams are the arguments of read_text_file.
type ReadParams struct {
	Path string `json:"path"`
	// Line is the first line to return, 1-based; negative counts from the
	// end (-1 = last line). Omitted: 1.
	Line *int `json:"line,omitempty"`
	// Limit is the maximum number of lines. Omitted: 2000.
	Limit *int `json:"limit,omitempty"`
}

// ReadResult is the result of read_text_file.
type ReadResult struct {
	Content    string `json:"content"`
	Hash       string `json:"hash"` // SHA-256 of the whole file, lower hex
	TotalLines int    `json:"total_lines"`
	StartLine  int    `json:"start_line"` // 1-based, inclusive
	EndLine    int    `json:"end_line"`   // 1-based, inclusive (StartLine-1 when empty)
	HasMore    bool   `json:"has_more"`
	// Hint says how to read the rest when HasMore (e.g. "call again with line=N").
	Hint string `json:"hint,omitempty"`
}

// WriteParams are the arguments of write_text_file.
type WriteParams struct {
	Path         string `json:"path"`
	Content      string `json:"content"`
	ExpectedHash string `json:"expected_hash,omitempty"`
	// CreateParents creates the missing parent directories of a new file
	// (inside the workspace only; see DirMaker), after the write is
	// approved. Without it a missing parent is "Parent directory not found"
	// (seed 003 TC6).
	CreateParents bool `json:"create_parents,omitempty"`
}

// WriteResult is the result of write_text_file.
type WriteResult struct {
	Success      bool   `json:"success"`
	BytesWritten int    `json:"bytes_written"`
	Created      bool   `json:"created"`
	Hash         string `json:"hash"`
	TotalLines   int    `json:"total_lines"`
	// CreatedDirs are the directories created for the file (create_parents),
	// outermost first.
	CreatedDirs []string `json:"created_dirs,omitempty"`
}

// EditParams are the arguments of edit_text_file.
type EditParams struct {
	Path      string `json:"path"`
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
	// ExpectedReplacements is how many occurrences must be replaced
	// (all of them). Omitted: 1. Values < 1 are rejected.
	ExpectedReplacements *int   `json:"expected_replacements,omitempty"`
	ExpectedHash         string `json:"expected_hash,omitempty"`
}

// LineRange is an inclusive 1-based range of lines.
type LineRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// EditResult is the result of edit_text_file.
type EditResult struct {
	Success      bool      `json:"success"`
	Diff         string    `json:"diff"`
	LineRange    LineRange `json:"line_range"` // lines of the (first) match in the original
	Replacements int       `json:"replacements"`
	Hash         string    `json:"hash"`
	TotalLines   int       `json:"total_lines"`
}

// EditOp is one edit of multi_edit_text_file.
type EditOp struct {
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
}

// MultiEditParams are the arguments of multi_edit_text_file.
type MultiEditParams struct {
	Path         string   `json:"path"`
	Edits        []EditOp `json:"edits"`
	ExpectedHash string   `json:"expected_hash,omitempty"`
}

// EditLineRange is where edit EditIndex matched, in the staged content
// that edit was applied to.
type EditLineRange struct {
	EditIndex int `json:"edit_index"`
	Start     int `json:"start"`
	End       int `json:"end"`
}

// MultiEditResult is the result of multi_edit_text_file.
type MultiEditResult struct {
	Success      bool            `json:"success"`
	Diff         string          `json:"diff"` // original → final
	AppliedCount int             `json:"applied_count"`
	LineRanges   []EditLineRange `json:"line_ranges"`
	Hash         string          `json:"hash"`
	TotalLines   int             `json:"total_lines"`
}

// ReplaceLinesParams are the arguments of replace_text_lines.
type ReplaceLinesParams struct {
	Path string `json:"path"`
	Hash string `json:"hash"`
	// Lines is [start, end): 1-indexed, end exclusive, negative counts from
	// the end (-1 = last line), end 0 = to the end of the file.
	Lines []int  `json:"lines"`
	Old   string `json:"old"` // exact content of those lines
	New   string `json:"new"`
}

// InsertLinesParams are the arguments of insert_text_lines.
type InsertLinesParams struct {
	Path    string `json:"path"`
	Hash    string `json:"hash"`
	Line    int    `json:"line"`   // 1-indexed, negative from the end
	Anchor  string `json:"anchor"` // exact content of that line
	Content string `json:"content"`
}

// AppendParams are the arguments of append_text_file.
type AppendParams struct {
	Path    string `json:"path"`
	Hash    string `json:"hash"`
	Content string `json:"content"`
}

// LinesResult is the result of the three line tools.
type LinesResult struct {
	Success    bool   `json:"success"`
	Hash       string `json:"hash"`
	TotalLines int    `json:"total_lines"`
	Diff       string `json:"diff"`
}
