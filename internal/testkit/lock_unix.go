//go:build unix

package testkit

import (
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive flock on the file at p, waiting at most
// wait for another process to release it (then goes on unlocked: a build
// that took turns only to save linking must not hang a test), and returns
// its release. Best effort: without the file, no lock.
func lockFile(p string, wait time.Duration) (unlock func()) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return func() {}
	}
	for deadline := time.Now().Add(wait); ; {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() } // closing the last descriptor releases the lock
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR || time.Now().After(deadline) {
			f.Close()
			return func() {}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
