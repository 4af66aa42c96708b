//go:build !unix

package testkit

import "time"

// lockFile takes no lock where there is no flock: concurrent builds may
// each link the same command, as they did without the cache.
func lockFile(string, time.Duration) (unlock func()) { return func() {} }
