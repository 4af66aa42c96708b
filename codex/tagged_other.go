//go:build !linux

package codex

import "errors"

// KillTagged needs /proc; elsewhere it is not supported.
func KillTagged(root int, kv string) (int, error) { return 0, errors.ErrUnsupported }

// KillTaggedAnywhere needs /proc; elsewhere it is not supported.
func KillTaggedAnywhere(kv string) (int, error) { return 0, errors.ErrUnsupported }

// Without /proc, Close relies on the app-server ending its commands itself
// and on killing its process group.
type procTree []struct{}

func snapshotBelow(root int) procTree { return nil }

func (t procTree) kill(rootGroup int) int { return 0 }

func killBelow(root int, match func(pid int) envMatch) int { return 0 }

type envMatch int
