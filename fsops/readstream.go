package fsops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"unicode/utf8"
)

// read_text_file on a stream: the file is read in chunks, and only the
// lines returned are kept. A file of at most MaxEditBytes is read to its
// end (hashed, its lines counted, checked for binary content, as a read of
// the whole content would); a larger one only as far as the lines returned,
// without hash or line count. So memory stays flat whatever the file's size,
// and a read of line 1 of a 64 GiB file reads one chunk.

// streamChunk is how much of a file one read takes.
const streamChunk = 64 << 10

// readLimits are the sizes a streamed read works with; tests make them
// small.
type readLimits struct {
	chunk   int   // bytes read at a time
	cap     int   // MaxReadBytes
	hashMax int64 // MaxEditBytes: the largest file hashed and counted
}

var defaultReadLimits = readLimits{chunk: streamChunk, cap: MaxReadBytes, hashMax: MaxEditBytes}

// readStream is read_text_file on an open file of size bytes (its size
// when opened; it may change while read).
func readStream(ctx context.Context, path string, r io.Reader, size int64, line *int, limit int) (*ReadResult, error) {
	return defaultReadLimits.read(ctx, path, r, size, line, limit)
}

func (lim readLimits) read(ctx context.Context, path string, r io.Reader, size int64, line *int, limit int) (*ReadResult, error) {
	start := 1
	if line != nil {
		start = *line
	}
	switch {
	case start == 0:
		return nil, lineZeroError()
	case start < 0:
		// Counting from the end needs the line count first: a file small
		// enough to hash is small enough to read whole.
		if size > lim.hashMax {
			return nil, negativeLineError(path, size)
		}
		data, err := io.ReadAll(io.LimitReader(r, lim.hashMax+1))
		if err != nil {
			return nil, fileError(path, err)
		}
		if int64(len(data)) > lim.hashMax {
			return nil, negativeLineError(path, int64(len(data)))
		}
		if IsBinary(data) {
			return nil, BinaryError(path)
		}
		return sliceLinesCap(data, line, limit, lim.cap)
	}
	return lim.streamLines(ctx, path, r, size, start, limit)
}

// streamLines reads lines [start, start+limit) of r (start ≥ 1), at most
// MaxReadBytes of them, as sliceLines does on the whole content.
func (lim readLimits) streamLines(ctx context.Context, path string, r io.Reader, size int64, start, limit int) (*ReadResult, error) {
	s := &lineStream{start: start, limit: limit, cap: lim.cap, hashMax: lim.hashMax, line: 1, collecting: true, endLine: start - 1}
	if size <= lim.hashMax {
		s.hash = sha256.New()
	}
	buf := make([]byte, max(lim.chunk, len(utf8BOM))) // the first read holds a BOM whole
	first := true
	eof := false
	for !eof {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := io.ReadFull(r, buf)
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			eof = true
		case err != nil:
			return nil, fileError(path, err)
		}
		chunk := buf[:n]
		s.read += int64(n)
		if s.hash != nil && s.read > lim.hashMax {
			s.hash = nil // grew past the limit while read: read it as a large file
		}
		if s.hash != nil {
			s.hash.Write(chunk)
		}
		body := chunk
		if first {
			first = false
			body = bytes.TrimPrefix(body, utf8BOM)
		}
		if len(body) > 0 {
			s.bodyLen += int64(len(body))
			s.last = body[len(body)-1]
		}
		used := s.take(body)
		if s.hash != nil {
			used = len(body) // hashed files are checked and counted whole
		}
		s.text.write(body[:used])
		s.newlines += bytes.Count(body[:used], []byte{'\n'})
		if s.text.bad {
			return nil, BinaryError(path)
		}
		if !s.collecting && s.hash == nil {
			// Done, and nothing more to hash: stop here.
			s.more = used < len(body) || s.read < size
			return s.result(path, size, false), nil
		}
	}
	if s.text.incomplete() {
		return nil, BinaryError(path)
	}
	s.finish()
	total := s.newlines
	if s.bodyLen > 0 && s.last != '\n' {
		total++
	}
	if start > total && !(start == 1 && total == 0) {
		return nil, pastEndError(start, total)
	}
	s.total = total
	return s.result(path, size, true), nil
}

// lineStream is the state of one streamed read.
type lineStream struct {
	start, limit int
	cap          int       // MaxReadBytes
	hashMax      int64     // MaxEditBytes
	hash         hash.Hash // nil: not hashed (over MaxEditBytes)
	read         int64     // bytes read, BOM included
	bodyLen      int64     // bytes read after the BOM
	last         byte      // the last byte read
	newlines     int       // line feeds in the bytes checked
	text         textCheck

	line       int    // the line the next byte belongs to (while collecting)
	collecting bool   // still taking lines
	content    []byte // the whole lines taken
	cur        []byte // the line being taken
	endLine    int
	cut        bool // the first line was longer than MaxReadBytes and was cut
	more       bool // bytes follow the content (large files)
	total      int
}

// take runs the bytes of body through the line selection and returns how
// many of them it needed: all, unless the selection ended inside body.
func (s *lineStream) take(body []byte) int {
	p := body
	for s.collecting && len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if s.line < s.start {
			if i < 0 {
				return len(body)
			}
			s.line++
			p = p[i+1:]
			continue
		}
		seg := p
		if i >= 0 {
			seg = p[:i+1]
		}
		if len(s.content)+len(s.cur)+len(seg) > s.cap {
			s.collecting = false
			taken := len(body) - len(p) // bytes of body before this piece of the line
			if len(s.content) > 0 {
				// The line does not fit: the content ends before it.
				return max(0, taken-len(s.cur))
			}
			// A first line longer than the cap: its start, cut at a rune
			// (the byte after the cap tells whether the cap is a boundary).
			before := len(s.cur)
			s.cur = append(s.cur, seg[:s.cap-before+1]...)
			cut := s.cap
			for cut > 0 && !utf8.RuneStart(s.cur[cut]) {
				cut--
			}
			s.content, s.cur = s.cur[:cut], nil
			s.endLine, s.cut = s.start, true
			return taken + max(0, cut-before)
		}
		s.cur = append(s.cur, seg...)
		p = p[len(seg):]
		if i >= 0 {
			s.endLine = s.line
			s.line++
			s.content = append(s.content, s.cur...)
			s.cur = s.cur[:0]
			if s.endLine-s.start+1 >= s.limit {
				s.collecting = false
				return len(body) - len(p)
			}
		}
	}
	return len(body)
}

// finish takes a last line without a line feed at the end of the file
// (take stopped collecting if it did not fit).
func (s *lineStream) finish() {
	if s.collecting && len(s.cur) > 0 {
		s.content = append(s.content, s.cur...)
		s.endLine = s.line
	}
	s.collecting = false
}

// result is the read's answer; counted says whether the file was read to
// its end (total is known).
func (s *lineStream) result(path string, size int64, counted bool) *ReadResult {
	res := &ReadResult{Content: string(s.content), StartLine: s.start, EndLine: s.endLine}
	if s.hash != nil {
		res.Hash = hex.EncodeToString(s.hash.Sum(nil))
		res.TotalLines = s.total
	}
	switch {
	case s.cut:
		res.HasMore = true
		res.Hint = longLineHint(s.start, s.cap)
		if counted && s.start < s.total {
			res.Hint += fmt.Sprintf(" Call read_text_file again with line=%d to read on.", s.start+1)
		} else if !counted {
			res.Hint += fmt.Sprintf(" If the file has more lines, call read_text_file again with line=%d to read on.", s.start+1)
		}
	case counted && res.EndLine < s.total:
		res.HasMore = true
		res.Hint = fmt.Sprintf("Showing lines %d-%d of %d. Call read_text_file again with line=%d to continue.",
			s.start, res.EndLine, s.total, res.EndLine+1)
	case !counted && s.more:
		res.HasMore = true
		res.Hint = fmt.Sprintf("Showing lines %d-%d. Call read_text_file again with line=%d to continue.",
			s.start, res.EndLine, res.EndLine+1)
	}
	if s.hash == nil {
		note := fmt.Sprintf("The file is %d bytes, over the %s the file tools edit: its hash and total_lines are not computed "+
			"(\"\" and 0), edits of it are refused, and lines are counted from the start only. Use the shell (tail, grep, sed) "+
			"for the rest of it.", max(size, s.read), sizeText(s.hashMax))
		res.Hint = joinHint(res.Hint, note)
	}
	return res
}

func joinHint(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// textCheck checks a stream, in pieces, for what isBinary refuses: a NUL
// byte or invalid UTF-8 (a rune may be split between pieces).
type textCheck struct {
	carry [utf8.UTFMax]byte
	n     int
	bad   bool
}

func (c *textCheck) write(p []byte) {
	if c.bad || len(p) == 0 {
		return
	}
	if bytes.IndexByte(p, 0) >= 0 {
		c.bad = true
		return
	}
	if c.n > 0 {
		var tmp [2 * utf8.UTFMax]byte
		k := copy(tmp[:], c.carry[:c.n])
		k += copy(tmp[k:], p[:min(len(p), utf8.UTFMax)])
		if !utf8.FullRune(tmp[:k]) {
			c.n = copy(c.carry[:], tmp[:k]) // still short: p was tiny
			return
		}
		r, size := utf8.DecodeRune(tmp[:k])
		if r == utf8.RuneError && size == 1 {
			c.bad = true
			return
		}
		p = p[size-c.n:]
		c.n = 0
	}
	// An incomplete rune at the end waits for the next piece.
	tail := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				tail = i
			}
			break
		}
	}
	if !utf8.Valid(p[:tail]) {
		c.bad = true
		return
	}
	c.n = copy(c.carry[:], p[tail:])
}

// incomplete reports whether the stream ended inside a rune.
func (c *textCheck) incomplete() bool { return c.n > 0 }

func longLineHint(line, capBytes int) string {
	return fmt.Sprintf("Line %d is longer than %s and was cut; use the shell to inspect it.", line, sizeText(int64(capBytes)))
}

func lineZeroError() *Error {
	return invalidRequest("line must not be 0: lines are 1-based (negative counts from the end)",
		"Use line=1 for the start of the file or line=-1 for the last line.")
}

func pastEndError(line, total int) *Error {
	return invalidRequest(fmt.Sprintf("line %d is past the end of the file (%d lines)", line, total),
		fmt.Sprintf("The file has %d lines; use a line between 1 and %d, or a negative line to count from the end.", total, total))
}

// negativeLineError refuses a line counted from the end of a file too large
// to count its lines.
func negativeLineError(path string, size int64) *Error {
	return invalidRequest(fmt.Sprintf("line must be positive for %s: it is %d bytes, over the %s whose lines are counted",
		path, size, sizeText(MaxEditBytes)),
		"Read its end with the shell (tail -n N), or give a line counted from the start.")
}
