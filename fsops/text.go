package fsops

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// utf8BOM is the byte order mark some editors put at the start of UTF-8
// files. It is kept, but it is not part of line 1's content.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// HashOf returns the lower-hex SHA-256 of data: the hash the tools report
// and check.
func HashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// CountLines returns the number of lines in a file's content, the
// total_lines the tools report: the number of line feeds, plus one when
// the content does not end with one. A final line feed ends the last line;
// it does not start another. An empty file has 0 lines; "a\n" and "a" have
// 1; "a\n\n" has 2. A UTF-8 BOM alone is no line.
func CountLines(data []byte) int { return countLines(bytes.TrimPrefix(data, utf8BOM)) }

// countLines counts lines as the diff sees them, a BOM being part of the
// first line.
func countLines(data []byte) int {
	n := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// isBinary reports whether data is not text the tools can edit: it holds a
// NUL byte or is not valid UTF-8.
func IsBinary(data []byte) bool {
	return bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data)
}

// splitLines splits data after each line feed; a last line without one is
// kept as it is.
func splitLines(data []byte) [][]byte {
	lines := make([][]byte, 0, countLines(data))
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			lines = append(lines, data)
			break
		}
		lines = append(lines, data[:nl+1:nl+1])
		data = data[nl+1:]
	}
	return lines
}

// linesBack returns the start of the line n lines before the line starting
// at pos (or 0).
func linesBack(data []byte, pos, n int) int {
	for ; n > 0 && pos > 0; n-- {
		pos = bytes.LastIndexByte(data[:pos-1], '\n') + 1
	}
	return pos
}

// linesForward returns the start of the line n lines after the line
// starting at pos (or len(data)).
func linesForward(data []byte, pos, n int) int {
	for ; n > 0 && pos < len(data); n-- {
		nl := bytes.IndexByte(data[pos:], '\n')
		if nl < 0 {
			return len(data)
		}
		pos += nl + 1
	}
	return pos
}

// lineEnding returns the file's dominant line terminator: "\r\n" when more
// lines end with CRLF than with a bare LF, else "\n".
func lineEnding(data []byte) string {
	lf := bytes.Count(data, []byte{'\n'})
	crlf := bytes.Count(data, []byte("\r\n"))
	if crlf > lf-crlf {
		return "\r\n"
	}
	return "\n"
}
