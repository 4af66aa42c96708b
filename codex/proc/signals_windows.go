package proc

import "syscall"

// Windows processes do not die by signals: a crash or TerminateProcess is an
// exit code (an NTSTATUS such as 0xC0000005 for an access violation), so
// ExitError.Signal stays 0 there and these maps are empty.
var (
	crashSignals = map[syscall.Signal]bool{}
	signalNames  = map[syscall.Signal]string{}
)
