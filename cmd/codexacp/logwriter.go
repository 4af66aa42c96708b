package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/codexacp/codexacp/internal/recovery"
)

// logBufferSize bounds the log output waiting for stderr.
const logBufferSize = 256 << 10

// logFlushTimeout bounds how long the agent waits at exit for its queued
// log output to reach a stderr nobody may be reading.
const logFlushTimeout = time.Second

// logWriter queues writes for one goroutine that passes them to w, so a
// client that does not read our stderr (a full pipe) never stalls the agent.
// Writes that do not fit in the bounded queue are dropped and counted; a
// later line says how many, once the queue has room again.
//
// newLogWriter starts the goroutine; close stops it. Each Write is one log
// record (slog's handlers write a record in one call), so drops are counted
// in lines.
type logWriter struct {
	w   io.Writer
	max int // bytes queued at most

	mu      sync.Mutex
	queue   [][]byte
	queued  int  // bytes in queue
	dropped int  // writes dropped since the last notice
	closed  bool // no more writes accepted; the goroutine ends once queue is empty
	wake    chan struct{}
	done    chan struct{} // closed when the goroutine has ended
}

func newLogWriter(w io.Writer, max int) *logWriter {
	l := &logWriter{w: w, max: max, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		// Logged straight to w: the queue has no reader any more.
		defer recovery.Recover(slog.New(slog.NewTextHandler(w, nil)), "log writer", nil)
		l.drain()
	}()
	return l
}

// Write queues a copy of p, or drops it when the queue is full. It never
// blocks on w and never fails: a log write error must not fail the caller.
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return len(p), nil
	}
	if l.queued+len(p) > l.max {
		l.dropped++
		return len(p), nil
	}
	if l.dropped > 0 {
		// Right where the gap is; it may overshoot max by one short line.
		l.enqueueLocked(l.noticeLocked())
	}
	l.enqueueLocked(bytes.Clone(p))
	return len(p), nil
}

func (l *logWriter) enqueueLocked(b []byte) {
	l.queue = append(l.queue, b)
	l.queued += len(b)
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// noticeLocked is the line that reports the dropped writes, and resets
// their count.
func (l *logWriter) noticeLocked() []byte {
	var b bytes.Buffer
	slog.New(slog.NewTextHandler(&b, nil)).Warn(fmt.Sprintf("dropped %d log lines: stderr was not read in time", l.dropped))
	l.dropped = 0
	return b.Bytes()
}

// drain passes the queue to w until close, then what is left.
func (l *logWriter) drain() {
	defer close(l.done)
	for {
		l.mu.Lock()
		batch := l.queue
		l.queue, l.queued = nil, 0
		if len(batch) == 0 && l.dropped > 0 {
			// Nothing more was logged after the drops: report them anyway.
			batch = [][]byte{l.noticeLocked()}
		}
		closed := l.closed
		l.mu.Unlock()
		for _, b := range batch {
			// A failing stderr (closed pipe) loses the logs, nothing else.
			l.w.Write(b)
		}
		if len(batch) > 0 {
			continue
		}
		if closed {
			return
		}
		<-l.wake
	}
}

// close stops accepting writes and waits up to timeout for the queue to
// reach w. It returns false when that did not happen in time: the goroutine
// is then left blocked on w, which is fine only because the process exits.
func (l *logWriter) close(timeout time.Duration) bool {
	l.mu.Lock()
	l.closed = true
	select {
	case l.wake <- struct{}{}:
	default:
	}
	l.mu.Unlock()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-l.done:
		return true
	case <-timer.C:
		return false
	}
}
