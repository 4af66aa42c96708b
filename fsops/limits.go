package fsops

import (
	"fmt"
	"math"
)

// Size limits. Every size is checked before the memory is spent: a file an
// edit reads, from its size on disk before it is read (LocalFiles) or from
// what the port returned; the content an edit would write, from the match
// count and the lengths of the strings before it is built. A call over
// MaxEditBytes fails with CodeTooLarge and a message naming the limit;
// nothing is written. The lines a diff aligns are counted before they are
// split: a window over MaxDiffLines is shown replaced whole instead.
const (
	// MaxEditBytes is the largest file the mutating tools read, and the
	// largest content they write (8 MiB, the MCP server's request-body
	// limit, so no write_text_file content can exceed it anyway). It is
	// also the largest file read_text_file hashes and counts: above it a
	// read returns the lines asked for without hash and total_lines.
	MaxEditBytes = 8 << 20
	// MaxDiffLines is the largest number of lines on either side of the
	// window a diff aligns (the lines between the first and the last
	// change); a larger window is shown replaced whole. Aligning costs
	// about 100 bytes a line on each side.
	MaxDiffLines = 1 << 18
)

// sizeText writes a byte count for a message: "8 MiB", "65 KiB", "12 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// FileTooLargeError is the -32007 error of an edit of a file over
// MaxEditBytes: it is refused before it is read.
func FileTooLargeError(path string, size int64) *Error {
	return &Error{Code: CodeTooLarge,
		Message: fmt.Sprintf("File too large to edit: %s (%d bytes, limit %s)", path, size, sizeText(MaxEditBytes)),
		Hint: fmt.Sprintf("The file tools edit files of at most %s; nothing was read or written. Read it in parts with "+
			"read_text_file (line and limit), and change it with the shell (sed, a script) if the user agrees.", sizeText(MaxEditBytes))}
}

// grewError is the -32007 error of a file that grew past MaxEditBytes while
// an edit read it.
func grewError(path string) *Error {
	return &Error{Code: CodeTooLarge,
		Message: fmt.Sprintf("File too large to edit: %s grew past %s while it was read", path, sizeText(MaxEditBytes)),
		Hint:    "Something is writing to the file; nothing was written. Wait until it is done, or change it with the shell."}
}

// resultTooLargeError is the -32007 error of an edit whose result would be
// over MaxEditBytes: it is refused before the result is built.
func resultTooLargeError(path string, size int64) *Error {
	return &Error{Code: CodeTooLarge,
		Message: fmt.Sprintf("Result too large: the change would make %s %s bytes (limit %s)", path, sizeCount(size), sizeText(MaxEditBytes)),
		Hint: fmt.Sprintf("Nothing was written. The file tools write files of at most %s: replace fewer occurrences "+
			"or shorter text per call, or use the shell if the user agrees.", sizeText(MaxEditBytes))}
}

// sizeCount prints a computed size, which saturates at MaxInt64.
func sizeCount(n int64) string {
	if n == math.MaxInt64 {
		return "more than 9.2e18"
	}
	return fmt.Sprint(n)
}

// grownSize returns size + count*(newLen-oldLen), the length of content of
// size bytes after count replacements of oldLen bytes by newLen bytes,
// saturating at MaxInt64 instead of overflowing.
func grownSize(size, count, oldLen, newLen int) int64 {
	delta := int64(newLen) - int64(oldLen)
	if delta <= 0 {
		return int64(size) + int64(count)*delta // shrinks: cannot overflow
	}
	if int64(count) > (math.MaxInt64-int64(size))/delta {
		return math.MaxInt64
	}
	return int64(size) + int64(count)*delta
}
