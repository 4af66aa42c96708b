//go:build !linux

package proc

import "errors"

// KillTagged needs /proc; elsewhere it is not supported.
func KillTagged(root int, kv string) (int, error) { return 0, errors.ErrUnsupported }

// KillTaggedAnywhere needs /proc; elsewhere it is not supported.
func KillTaggedAnywhere(kv string) (int, error) { return 0, errors.ErrUnsupported }

// Tree is empty without /proc: an app-server's Close relies on the
// app-server ending its commands itself and on killing its process group.
type Tree []struct{}

// SnapshotBelow records nothing without /proc.
func SnapshotBelow(root int) Tree { return nil }

// Kill kills nothing: the tree is empty.
func (t Tree) Kill(rootGroup int) int { return 0 }

func killBelow(root int, match func(pid int) envMatch) int { return 0 }

type envMatch int
