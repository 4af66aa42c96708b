//go:build !unix

package mcp

// checkPrivateDir has nothing to check where the host has no relay socket
// (relaySupported).
func checkPrivateDir(string) error { return nil }
