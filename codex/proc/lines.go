package proc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader splits a stream into lines of any length. Short lines are
// returned straight from the bufio buffer; only lines longer than the buffer
// are assembled in a separate slice (codex prints whole command outputs in
// one JSON line).
type lineReader struct {
	br   *bufio.Reader
	long []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its "\n" (and "\r"), valid until the
// following call. At the end of the stream it returns the unterminated rest,
// possibly empty, with the error that ended it (io.EOF at a clean end).
func (l *lineReader) next() ([]byte, error) {
	l.long = l.long[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			l.long = append(l.long, chunk...)
			continue
		}
		line := chunk
		if len(l.long) > 0 {
			l.long = append(l.long, chunk...)
			line = l.long
		}
		if err == nil {
			line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
		}
		return line, err
	}
}

// ReadLines calls onLine for every non-empty line in r until EOF or a read
// error, including an unterminated last line. Lines have no size limit.
func ReadLines(r io.Reader, onLine func([]byte)) {
	br := newLineReader(r)
	for {
		line, err := br.next()
		if len(line) > 0 {
			onLine(line)
		}
		if err != nil {
			return
		}
	}
}
