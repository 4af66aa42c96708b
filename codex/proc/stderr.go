package proc

import (
	"bytes"
	"log/slog"
	"sync"
)

// maxLoggedLine caps one stderr line in the debug log.
const maxLoggedLine = 4 << 10

// StderrLog receives codex's stderr: it keeps the last max bytes for error
// reports and logs each line at debug level.
type StderrLog struct {
	log *slog.Logger
	max int

	mu      sync.Mutex
	buf     []byte // the tail, at most max bytes
	partial []byte // the current line, not yet logged
}

// NewStderrLog logs to log and keeps the last max bytes.
func NewStderrLog(log *slog.Logger, max int) *StderrLog {
	return &StderrLog{log: log, max: max}
}

func (s *StderrLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	if len(s.buf) > s.max {
		s.buf = append(s.buf[:0], s.buf[len(s.buf)-s.max:]...)
	}
	rest := p
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		s.logLine(append(s.partial, rest[:i]...))
		s.partial = s.partial[:0]
		rest = rest[i+1:]
	}
	if room := maxLoggedLine - len(s.partial); room > 0 {
		s.partial = append(s.partial, rest[:min(room, len(rest))]...)
	}
	return len(p), nil
}

// Flush logs an unterminated last line.
func (s *StderrLog) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.partial) > 0 {
		s.logLine(s.partial)
		s.partial = s.partial[:0]
	}
}

func (s *StderrLog) logLine(line []byte) {
	if len(line) > maxLoggedLine {
		line = line[:maxLoggedLine]
	}
	if len(bytes.TrimSpace(line)) > 0 {
		s.log.Debug("codex stderr", "line", string(line))
	}
}

// Tail returns the kept end of stderr, starting at a line boundary when it
// had to be cut.
func (s *StderrLog) Tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.buf
	if len(t) == s.max {
		if i := bytes.IndexByte(t, '\n'); i >= 0 {
			t = t[i+1:]
		}
	}
	return string(t)
}
