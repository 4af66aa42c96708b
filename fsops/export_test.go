package fsops

import "time"

// SetDiffTimeout changes the time bound of one line alignment and returns a
// function that restores it.
func SetDiffTimeout(d time.Duration) (restore func()) {
	old := diffTimeout
	diffTimeout = d
	return func() { diffTimeout = old }
}
