package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexacp/codexacp/internal/syncbuf"
)

// stuckWriter blocks every Write until release is closed, and says when
// the first one began.
type stuckWriter struct {
	entered chan struct{}
	once    sync.Once
	release chan struct{}
	buf     bytes.Buffer // written only by the logWriter's goroutine
}

func newStuckWriter() *stuckWriter {
	return &stuckWriter{entered: make(chan struct{}), release: make(chan struct{})}
}

func (s *stuckWriter) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return s.buf.Write(p)
}

func TestLogWriterDropsWhenFullAndSaysSo(t *testing.T) {
	w := newStuckWriter()
	l := newLogWriter(w, 102) // 12 lines, or 12 lines and "after"
	fmt.Fprintf(l, "line 00\n")
	<-w.entered // the goroutine holds line 00 and is stuck in stderr
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(l, "line %02d\n", i) // never blocks: 12 are queued, 18 dropped
	}
	close(w.release)
	fmt.Fprintf(l, "after\n")
	if !l.close(10 * time.Second) {
		t.Fatal("close did not flush")
	}
	lines := strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n")
	var want []string
	for i := 0; i <= 12; i++ {
		want = append(want, fmt.Sprintf("line %02d", i))
	}
	if len(lines) != len(want)+2 || strings.Join(lines[:len(want)], "|") != strings.Join(want, "|") ||
		!strings.Contains(lines[len(want)], `level=WARN msg="dropped 18 log lines`) || lines[len(want)+1] != "after" {
		t.Errorf("output:\n%s", w.buf.String())
	}
}

func TestLogWriterNoticeWithoutLaterWrites(t *testing.T) {
	w := newStuckWriter()
	l := newLogWriter(w, 10)
	fmt.Fprintf(l, "first\n")
	<-w.entered
	fmt.Fprintf(l, "second\n")
	fmt.Fprintf(l, "third\n") // dropped: "second\n" fills the queue
	close(w.release)
	l.close(10 * time.Second)
	if out := w.buf.String(); !strings.HasPrefix(out, "first\nsecond\n") || !strings.Contains(out, "dropped 1 log lines") {
		t.Errorf("output:\n%s", out)
	}
}

// TestLogWriterCloseIsBounded: an exit is not held up by a stderr that
// nobody reads.
func TestLogWriterCloseIsBounded(t *testing.T) {
	w := newStuckWriter()
	defer close(w.release) // lets the goroutine end
	l := newLogWriter(w, 100)
	fmt.Fprintf(l, "stuck\n")
	<-w.entered
	if l.close(10 * time.Millisecond) {
		t.Error("close reported a flush that cannot have happened")
	}
	fmt.Fprintf(l, "after close\n") // ignored, not a panic or a block
}

// TestLogWriterConcurrentAccounting: with many writers and a slow stderr,
// every line is either written or counted in a notice.
func TestLogWriterConcurrentAccounting(t *testing.T) {
	var out lockedBuffer
	l := newLogWriter(&out, 512)
	const writers, each = 8, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				fmt.Fprintf(l, "g%d line %d\n", g, i)
			}
		})
	}
	wg.Wait()
	if !l.close(10 * time.Second) {
		t.Fatal("close did not flush")
	}
	written, dropped := 0, 0
	notice := regexp.MustCompile(`dropped (\d+) log lines`)
	for line := range strings.SplitSeq(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if m := notice.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			dropped += n
			continue
		}
		written++
	}
	if written+dropped != writers*each {
		t.Errorf("%d written + %d dropped, want %d", written, dropped, writers*each)
	}
	t.Logf("%d written, %d dropped", written, dropped)
}

// lockedBuffer is slow, like a pipe, so the queue fills.
type lockedBuffer struct{ syncbuf.Buffer }

func (b *lockedBuffer) Write(p []byte) (int, error) {
	time.Sleep(10 * time.Microsecond)
	return b.Buffer.Write(p)
}
