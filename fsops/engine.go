package fsops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Tool names, as they appear in Change.Tool.
const (
	ToolReadTextFile      = "read_text_file"
	ToolWriteTextFile     = "write_text_file"
	ToolEditTextFile      = "edit_text_file"
	ToolMultiEditTextFile = "multi_edit_text_file"
	ToolReplaceTextLines  = "replace_text_lines"
	ToolInsertTextLines   = "insert_text_lines"
	ToolAppendTextFile    = "append_text_file"
)

// Read limits.
const (
	// DefaultReadLimit is the number of lines read_text_file returns when
	// no limit is given.
	DefaultReadLimit = 2000
	// MaxReadBytes caps the content one read_text_file call returns; the
	// result then says where to continue.
	MaxReadBytes = 256 << 10
)

// Engine runs the file tools against a Files port. It is safe for
// concurrent use; writes to one file are serialised across all engines of
// the process.
type Engine struct {
	files Files
	locks *pathLocks
}

// NewEngine returns an engine that reads and writes through files.
func NewEngine(files Files) *Engine {
	return &Engine{files: files, locks: processLocks}
}

// ReadTextFile implements read_text_file: up to Limit lines from Line on,
// cut at MaxReadBytes, with the hash and line count of the whole file.
func (e *Engine) ReadTextFile(ctx context.Context, p ReadParams) (*ReadResult, error) {
	path, err := e.target(ctx, p.Path)
	if err != nil {
		return nil, err
	}
	limit := DefaultReadLimit
	if p.Limit != nil {
		if *p.Limit < 1 {
			return nil, invalidRequest(fmt.Sprintf("limit must be at least 1, got %d", *p.Limit),
				"Omit limit to read up to 2000 lines.")
		}
		limit = *p.Limit
	}
	if so, ok := e.files.(StreamOpener); ok {
		r, size, err := so.OpenStream(ctx, path)
		if err == nil {
			defer r.Close()
			return readStream(ctx, path, r, size, p.Line, limit)
		}
		if !errors.Is(err, ErrNotStreamed) {
			return nil, fileError(path, err)
		}
	}
	data, err := e.readText(ctx, path)
	var te *Error
	if pr, ok := e.files.(PartReader); ok && errors.As(err, &te) && te.Code == CodeTooLarge {
		return e.readPart(ctx, pr, path, p.Line, limit)
	}
	if err != nil {
		return nil, err
	}
	return sliceLines(data, p.Line, limit)
}

// readPart reads a file too large to read whole through the port: the
// lines to return are planned on the stored file, streamed, then read by
// range.
func (e *Engine) readPart(ctx context.Context, pr PartReader, path string, line *int, limit int) (*ReadResult, error) {
	r, size, err := pr.OpenStored(ctx, path)
	if err != nil {
		return nil, fileError(path, err)
	}
	defer r.Close()
	res, err := readStream(ctx, path, r, size, line, limit)
	if err != nil || res.EndLine < res.StartLine {
		return res, err
	}
	part, err := pr.ReadLines(ctx, path, res.StartLine, res.EndLine-res.StartLine+1)
	if err != nil {
		return nil, fileError(path, err)
	}
	if len(part) > MaxReadBytes {
		cut := MaxReadBytes
		for cut > 0 && !utf8.RuneStart(part[cut]) {
			cut--
		}
		part = part[:cut]
	}
	res.Content = string(part)
	if res.Hash != "" {
		res.Hint = joinHint(res.Hint, fmt.Sprintf("The file is too large (%d bytes) to edit through the editor; "+
			"hash and total_lines are those of the file on disk.", size))
	}
	return res, nil
}

// sliceLines is read_text_file on a file's content.
func sliceLines(data []byte, line *int, limit int) (*ReadResult, error) {
	return sliceLinesCap(data, line, limit, MaxReadBytes)
}

// sliceLinesCap is sliceLines with capBytes for MaxReadBytes (tests make it small).
func sliceLinesCap(data []byte, line *int, limit, capBytes int) (*ReadResult, error) {
	total := CountLines(data)
	start := 1
	if line != nil {
		switch l := *line; {
		case l == 0:
			return nil, lineZeroError()
		case l < 0:
			start = max(total+l+1, 1)
		case l > total && !(l == 1 && total == 0):
			return nil, pastEndError(l, total)
		default:
			start = l
		}
	}

	body := bytes.TrimPrefix(data, utf8BOM)
	pos := 0
	if start > 1 {
		pos = linesForward(body, 0, start-1)
	}
	res := &ReadResult{Hash: HashOf(data), TotalLines: total, StartLine: start, EndLine: start - 1}
	end := pos
	for res.EndLine-start+1 < limit && end < len(body) {
		next := linesForward(body, end, 1)
		if next-pos > capBytes {
			if end == pos {
				// A single line longer than the capBytes: return its start.
				cut := pos + capBytes
				for cut > pos && !utf8.RuneStart(body[cut]) {
					cut--
				}
				res.Content = string(body[pos:cut])
				res.EndLine = start
				res.HasMore = true
				res.Hint = longLineHint(start, capBytes)
				if start < total {
					res.Hint += fmt.Sprintf(" Call read_text_file again with line=%d to read on.", start+1)
				}
				return res, nil
			}
			break
		}
		end = next
		res.EndLine++
	}
	res.Content = string(body[pos:end])
	if res.EndLine < total {
		res.HasMore = true
		res.Hint = fmt.Sprintf("Showing lines %d-%d of %d. Call read_text_file again with line=%d to continue.",
			start, res.EndLine, total, res.EndLine+1)
	}
	return res, nil
}

// WriteTextFile implements write_text_file: it creates or replaces the file.
// When an existing file starts with a UTF-8 BOM or uses CRLF line endings
// and the new content has neither, the BOM and CRLF endings are kept.
func (e *Engine) WriteTextFile(ctx context.Context, p WriteParams, before BeforeWrite) (*WriteResult, error) {
	path, err := checkPath(p.Path)
	if err != nil {
		return nil, err
	}
	if err := checkText("content", p.Content); err != nil {
		return nil, err
	}
	if len(p.Content) > MaxEditBytes {
		return nil, resultTooLargeError(path, int64(len(p.Content)))
	}
	if path, err = e.resolve(ctx, path); err != nil {
		return nil, err
	}
	unlock, err := e.locks.lock(ctx, path)
	if err != nil {
		return nil, err
	}
	defer unlock()

	info, err := e.files.Stat(ctx, path)
	if err != nil {
		return nil, fileError(path, err)
	}
	if info.IsDir {
		return nil, IsDirectoryError(path, nil)
	}
	var old []byte
	var newDirs []string
	if info.Exists {
		if old, err = e.readEditable(ctx, path); err != nil {
			return nil, err
		}
		if p.ExpectedHash != "" && HashOf(old) != p.ExpectedHash {
			return nil, staleError(path, p.ExpectedHash, old, true)
		}
	} else {
		if p.ExpectedHash != "" {
			return nil, staleError(path, p.ExpectedHash, nil, false)
		}
		if newDirs, err = e.missingParents(ctx, path, p.CreateParents); err != nil {
			return nil, err
		}
	}

	data := []byte(p.Content)
	if info.Exists {
		if size := conventionsSize(old, data); size > MaxEditBytes {
			return nil, resultTooLargeError(path, size)
		}
		data = keepFileConventions(old, data)
	}
	c := &Change{Tool: ToolWriteTextFile, Path: path, Old: old, New: data, Created: !info.Exists, NewDirs: newDirs}
	c.Diff, c.ChangedLines = diffAndLines(path, old, data, wholeRegion(old, data))
	if err := e.commit(ctx, c, before); err != nil {
		return nil, err
	}
	return &WriteResult{Success: true, BytesWritten: len(data), Created: c.Created,
		Hash: HashOf(data), TotalLines: CountLines(data), CreatedDirs: c.NewDirs}, nil
}

// EditTextFile implements edit_text_file: it replaces old_string, which must
// occur exactly expected_replacements times (default 1).
func (e *Engine) EditTextFile(ctx context.Context, p EditParams, before BeforeWrite) (*EditResult, error) {
	path, err := checkPath(p.Path)
	if err != nil {
		return nil, err
	}
	want := 1
	if p.ExpectedReplacements != nil {
		want = *p.ExpectedReplacements
		if want < 1 {
			return nil, invalidRequest(fmt.Sprintf("expected_replacements must be at least 1, got %d", want),
				"Omit expected_replacements to replace a unique occurrence, or give the number of occurrences to replace.")
		}
	}
	if err := checkEditStrings("", p.OldString, p.NewString); err != nil {
		return nil, err
	}
	oldStr, newStr := []byte(p.OldString), []byte(p.NewString)

	var res EditResult
	c, err := e.mutate(ctx, ToolEditTextFile, path, p.ExpectedHash, before, func(path string, old []byte) ([]byte, []region, error) {
		// Counted, and the result sized, before anything is built: a
		// replacement of many matches by a long string would need more
		// memory than there is.
		switch n := bytes.Count(old, oldStr); {
		case n == 0:
			return nil, nil, notFoundInFile(old, p.OldString)
		case n != want && p.ExpectedReplacements == nil:
			return nil, nil, &Error{Code: CodeMatchCount,
				Message: fmt.Sprintf("String appears %d times (must be unique): %s", n, p.OldString),
				Hint: fmt.Sprintf("Add surrounding lines to old_string so that it matches one place only, "+
					"or set expected_replacements to %d to replace every occurrence.", n)}
		case n != want:
			return nil, nil, &Error{Code: CodeMatchCount,
				Message: fmt.Sprintf("Expected %d replacements but found %d: %s", want, n, p.OldString),
				Hint: fmt.Sprintf("old_string occurs %d times. Set expected_replacements to %d to replace them all, "+
					"or change old_string so that it matches exactly the places you mean.", n, n)}
		}
		size := grownSize(len(old), want, len(oldStr), len(newStr))
		if size > MaxEditBytes {
			return nil, nil, resultTooLargeError(path, size)
		}
		out := make([]byte, 0, size)
		var first, last region // the diff needs only the first and the last
		prev := 0
		for k := 0; k < want; k++ {
			m := prev + bytes.Index(old[prev:], oldStr)
			out = append(out, old[prev:m]...)
			last = region{oldStart: m, oldEnd: m + len(oldStr), newStart: len(out), newEnd: len(out) + len(newStr)}
			if k == 0 {
				first = last
				res.LineRange = matchLines(old, m, len(oldStr))
			}
			out = append(out, newStr...)
			prev = m + len(oldStr)
		}
		out = append(out, old[prev:]...)
		res.Replacements = want
		if want == 1 {
			return out, []region{first}, nil
		}
		return out, []region{first, last}, nil
	})
	if err != nil {
		return nil, err
	}
	res.Success, res.Diff, res.Hash, res.TotalLines = true, c.Diff, HashOf(c.New), CountLines(c.New)
	return &res, nil
}

// MultiEditTextFile implements multi_edit_text_file: the edits apply in
// order, each to the result of the ones before, and all or none are
// written.
func (e *Engine) MultiEditTextFile(ctx context.Context, p MultiEditParams, before BeforeWrite) (*MultiEditResult, error) {
	path, err := checkPath(p.Path)
	if err != nil {
		return nil, err
	}
	if len(p.Edits) == 0 {
		return nil, invalidRequest("Edits array cannot be empty",
			"Give at least one {old_string, new_string} edit.")
	}
	for i, ed := range p.Edits {
		if err := checkEditStrings(fmt.Sprintf("Edit %d: ", i), ed.OldString, ed.NewString); err != nil {
			return nil, err
		}
	}

	var res MultiEditResult
	c, err := e.mutate(ctx, ToolMultiEditTextFile, path, p.ExpectedHash, before, func(path string, old []byte) ([]byte, []region, error) {
		oldStrings := make([][]byte, len(p.Edits))
		for i, ed := range p.Edits {
			oldStrings[i] = []byte(ed.OldString)
		}
		st := newStaging(old, oldStrings)
		st.path = path
		res.LineRanges = make([]EditLineRange, 0, len(p.Edits))
		for i, ed := range p.Edits {
			lr, err := st.apply(i, []byte(ed.OldString), []byte(ed.NewString))
			if err != nil {
				return nil, nil, err
			}
			res.LineRanges = append(res.LineRanges, EditLineRange{EditIndex: i, Start: lr.Start, End: lr.End})
		}
		return st.content, st.regions(), nil
	})
	if err != nil {
		return nil, err
	}
	res.Success, res.Diff, res.AppliedCount = true, c.Diff, len(p.Edits)
	res.Hash, res.TotalLines = HashOf(c.New), CountLines(c.New)
	return &res, nil
}

// mutate runs the read → compute → diff → BeforeWrite → write sequence of
// an edit under the path's lock and returns the written change. compute
// gets the resolved path and the content, and returns the new content and
// the regions of the old it replaced; it sizes its result before building
// it (MaxEditBytes).
func (e *Engine) mutate(ctx context.Context, tool, path, expectedHash string, before BeforeWrite,
	compute func(path string, old []byte) ([]byte, []region, error)) (*Change, error) {
	path, err := e.resolve(ctx, path)
	if err != nil {
		return nil, err
	}
	unlock, err := e.locks.lock(ctx, path)
	if err != nil {
		return nil, err
	}
	defer unlock()

	old, err := e.readEditable(ctx, path)
	if err != nil {
		return nil, err
	}
	if expectedHash != "" && HashOf(old) != expectedHash {
		return nil, staleError(path, expectedHash, old, true)
	}
	data, regions, err := compute(path, old)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxEditBytes { // compute sized it already; this is the last word
		return nil, resultTooLargeError(path, int64(len(data)))
	}
	c := &Change{Tool: tool, Path: path, Old: old, New: data}
	c.Diff, c.ChangedLines = diffAndLines(path, old, data, regions)
	if err := e.commit(ctx, c, before); err != nil {
		return nil, err
	}
	return c, nil
}

// commit asks before (if any) and writes the change.
func (e *Engine) commit(ctx context.Context, c *Change, before BeforeWrite) error {
	if before != nil {
		if err := before(ctx, c); err != nil {
			var te *Error
			if errors.As(err, &te) {
				return te
			}
			if ctx.Err() != nil {
				return err
			}
			return PermissionError(c.Path, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(c.NewDirs) > 0 {
		// Approved with the write: the directories come first.
		dir := filepath.Dir(c.Path)
		dm, ok := e.files.(DirMaker)
		if !ok {
			return CannotCreateDirsError(dir)
		}
		if err := dm.MkdirAll(ctx, dir); err != nil {
			return fileError(dir, err)
		}
	}
	if err := e.files.WriteFile(ctx, c.Path, c.New); err != nil {
		return fileError(c.Path, err)
	}
	return nil
}

// target validates a tool's path argument and resolves it.
func (e *Engine) target(ctx context.Context, raw string) (string, error) {
	path, err := checkPath(raw)
	if err != nil {
		return "", err
	}
	return e.resolve(ctx, path)
}

// resolve returns the location path leads to, which every later step (the
// lock, the read, the veto, the write) uses.
func (e *Engine) resolve(ctx context.Context, path string) (string, error) {
	real, err := e.files.Resolve(ctx, path)
	if err != nil {
		return "", fileError(path, err)
	}
	return real, nil
}

// readText reads an existing text file.
func (e *Engine) readText(ctx context.Context, path string) ([]byte, error) {
	data, err := e.files.ReadFile(ctx, path)
	if err != nil {
		return nil, fileError(path, err)
	}
	if IsBinary(data) {
		return nil, BinaryError(path)
	}
	return data, nil
}

// readEditable reads an existing text file an edit is to change: at most
// MaxEditBytes (LocalFiles refuses a larger one from its size before
// reading it; other ports are checked on what they return).
func (e *Engine) readEditable(ctx context.Context, path string) ([]byte, error) {
	data, err := e.readText(ctx, path)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxEditBytes {
		return nil, FileTooLargeError(path, int64(len(data)))
	}
	return data, nil
}

// missingParents returns the directories a new file at path needs, outermost
// first: none when its parent exists. Without create a missing parent is the
// seed's "Parent directory not found"; with it, the missing directories up
// to the nearest existing one are returned, for the write to create once it
// is approved (so the port must be able to create directories). A file
// where a directory should be fails either way. All is checked through the
// port, so the editor and the disk behave alike.
func (e *Engine) missingParents(ctx context.Context, path string, create bool) ([]string, error) {
	var missing []string
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		info, err := e.files.Stat(ctx, dir)
		if err != nil {
			return nil, fileError(dir, err)
		}
		if info.Exists && !info.IsDir {
			pe := ParentNotFoundError(dir, nil)
			pe.Hint = dir + " is a file, not a directory; choose another path."
			return nil, pe
		}
		if info.Exists {
			break
		}
		if !create {
			return nil, ParentNotFoundError(dir, nil)
		}
		missing = append(missing, dir)
		if filepath.Dir(dir) == dir {
			break // a missing file-system root: the port will refuse it
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if _, ok := e.files.(DirMaker); !ok {
		return nil, CannotCreateDirsError(filepath.Dir(path))
	}
	slices.Reverse(missing)
	return missing, nil
}

// fileError passes a port's *Error on and gives other errors a tool code
// by meaning.
func fileError(path string, err error) error {
	var te *Error
	switch {
	case errors.As(err, &te):
		return te
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, fs.ErrNotExist):
		return NotFoundError(path, err)
	case errors.Is(err, fs.ErrPermission):
		return PermissionError(path, err)
	case strings.Contains(err.Error(), path):
		return err // the path is named once
	}
	return fmt.Errorf("%s: %w", path, err)
}

// checkText rejects text the model sent that the tools would not be able
// to edit afterwards.
func checkText(field, s string) error {
	if !utf8.ValidString(s) {
		return invalidRequest(field+" is not valid UTF-8", "Send text only; these tools cannot write binary data.")
	}
	if bytes.IndexByte([]byte(s), 0) >= 0 {
		return invalidRequest(field+" contains a NUL character", "Send text only; these tools cannot write binary data.")
	}
	return nil
}

func checkEditStrings(prefix, oldStr, newStr string) error {
	if oldStr == "" {
		return invalidRequest(prefix+"old_string cannot be empty",
			"Give the exact text to replace, with enough surrounding lines to be unique; to add text at the end use append_text_file.")
	}
	if oldStr == newStr {
		return invalidRequest(prefix+"old_string and new_string are identical",
			"The edit would change nothing; give the new text in new_string.")
	}
	if err := checkText(prefix+"old_string", oldStr); err != nil {
		return err
	}
	return checkText(prefix+"new_string", newStr)
}

// notFoundInFile is the -32010 error of edit_text_file, with a hint that
// names the likely cause.
func notFoundInFile(content []byte, oldStr string) *Error {
	return &Error{Code: CodeStringNotFound, Message: "String not found in file: " + oldStr,
		Hint: notFoundHint(content, oldStr)}
}

func notFoundHint(content []byte, oldStr string) string {
	hint := "Re-read the file with read_text_file and copy old_string exactly from it, including whitespace, indentation and line breaks."
	if bytes.Contains(content, []byte("\r\n")) && bytes.Contains([]byte(oldStr), []byte("\n")) && !bytes.Contains([]byte(oldStr), []byte("\r\n")) {
		hint += ` The file uses CRLF line endings: old_string must contain "\r\n" where the file breaks lines.`
	}
	return hint
}

// matchLines returns the 1-based lines a match of n bytes at off covers in
// data: the line of its first byte and the line of its last byte.
func matchLines(data []byte, off, n int) LineRange {
	start := 1 + bytes.Count(data[:off], []byte{'\n'})
	end := start
	if n > 1 {
		end += bytes.Count(data[off:off+n-1], []byte{'\n'})
	}
	return LineRange{Start: start, End: end}
}

// conventionsSize is the length of keepFileConventions(old, data), known
// before it is built.
func conventionsSize(old, data []byte) int64 {
	size := int64(len(data))
	if lineEnding(old) == "\r\n" && !bytes.Contains(data, []byte("\r\n")) {
		size += int64(bytes.Count(data, []byte{'\n'}))
	}
	if bytes.HasPrefix(old, utf8BOM) && !bytes.HasPrefix(data, utf8BOM) {
		size += int64(len(utf8BOM))
	}
	return size
}

// keepFileConventions gives new content an existing file's UTF-8 BOM and
// CRLF line endings when the content itself has neither.
func keepFileConventions(old, data []byte) []byte {
	if lineEnding(old) == "\r\n" && !bytes.Contains(data, []byte("\r\n")) && bytes.IndexByte(data, '\n') >= 0 {
		data = bytes.ReplaceAll(data, []byte{'\n'}, []byte("\r\n"))
	}
	if bytes.HasPrefix(old, utf8BOM) && !bytes.HasPrefix(data, utf8BOM) {
		data = append(append(make([]byte, 0, len(utf8BOM)+len(data)), utf8BOM...), data...)
	}
	return data
}
