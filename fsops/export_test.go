package fsops

import "time"

// SetDiffTimeout changes the cap on go-diff's time per region and returns
// a function that restores it.
func SetDiffTimeout(d time.Duration) (restore func()) {
	old := diffTimeout
	diffTimeout = d
	return func() { diffTimeout = old }
}
