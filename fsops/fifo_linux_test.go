package fsops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/codexacp/codexacp/internal/stress"
)

// osThreads returns the number of OS threads of this process, and how many
// of them wait in the open of a FIFO (the kernel's wait_for_partner).
func osThreads(t *testing.T) (all, inFIFOOpen int) {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, task := range tasks {
		if w, _ := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "wchan")); string(w) == "wait_for_partner" {
			inFIFOOpen++
		}
	}
	return len(tasks), inFIFOOpen
}

// A file flipped between a regular file and a symlink to a FIFO while 300
// reads and 300 edits run (five times; twice in the quick loop): every call
// is answered (a FIFO opened between a check and the open used to block it,
// its OS thread and the path's lock forever: 2-5 of 300 reads and 84-113 of
// 300 edits), no lock stays held, and no OS thread is left behind.
func TestFlippingFIFONeverBlocks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := NewEngine(NewLocalFiles().Within(dir))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The first round brings the runtime to the threads this concurrency
	// needs (it keeps idle ones); the second must not add to them.
	flipWhileCalling(t, ctx, e, dir, path, fifo, 50)
	threadsBefore, _ := osThreads(t)
	for range stress.Size(t, 2, 5) { // the window between a check and an open is narrow: try it often
		flipWhileCalling(t, ctx, e, dir, path, fifo, 300)
	}

	if processLocks.size() != 0 {
		t.Errorf("%d path locks held after the calls", processLocks.size())
	}
	after, blocked := osThreads(t)
	// A leaked thread is one held in a FIFO's open: that is what is
	// asserted. The total only shows it (the runtime starts threads for
	// blocking syscalls as load demands; a busy machine adds a few).
	t.Logf("OS threads: %d before, %d after, %d in a FIFO's open", threadsBefore, after, blocked)
	if blocked > 0 {
		t.Errorf("%d OS threads wait in a FIFO's open (threads %d before, %d after)", blocked, threadsBefore, after)
	}
	if err := os.WriteFile(path+".new", []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EditTextFile(ctx, EditParams{Path: path, OldString: "alpha", NewString: "beta"}, nil); err != nil {
		t.Errorf("an edit after the flipping: %v", err)
	}
}

// flipWhileCalling runs calls reads and calls edits of path through e
// while path flips between a regular file and a link to fifo, and fails
// unless every call is answered.
func flipWhileCalling(t *testing.T, ctx context.Context, e *Engine, dir, path, fifo string, calls int) {
	t.Helper()
	stop := make(chan struct{})
	var flippers sync.WaitGroup
	for k := range 4 {
		flippers.Add(1)
		go flip(&flippers, stop, dir, path, fifo, k)
	}
	defer flippers.Wait()
	defer close(stop)

	var answered atomic.Int64
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if i%2 == 0 {
					_, _ = e.ReadTextFile(ctx, ReadParams{Path: path})
				} else {
					_, _ = e.EditTextFile(ctx, EditParams{Path: path, OldString: "alpha", NewString: "beta"}, nil)
				}
				answered.Add(1)
			}
		}()
	}
	go func() {
		for i := range 2 * calls {
			jobs <- i
		}
		close(jobs)
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%d of %d calls answered; the rest are blocked", answered.Load(), 2*calls)
	}
}

// flip turns path into a regular file and into a symlink to fifo, again
// and again, by atomic renames (so the path always exists), until stop.
func flip(wg *sync.WaitGroup, stop <-chan struct{}, dir, path, fifo string, k int) {
	defer wg.Done()
	reg, link := filepath.Join(dir, fmt.Sprintf("reg%d.tmp", k)), filepath.Join(dir, fmt.Sprintf("link%d.tmp", k))
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if i%2 == 0 {
			_ = os.WriteFile(reg, []byte("alpha\n"), 0o644)
			_ = os.Rename(reg, path)
		} else {
			_ = os.Symlink(fifo, link)
			_ = os.Rename(link, path)
		}
	}
}
