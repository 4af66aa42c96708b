//go:build unix

package proc

import "syscall"

// crashSignals are those a process gets for its own fault; its stderr (a
// Rust panic before an abort, say) may tell why.
var crashSignals = map[syscall.Signal]bool{
	syscall.SIGABRT: true, syscall.SIGBUS: true, syscall.SIGFPE: true, syscall.SIGILL: true,
	syscall.SIGSEGV: true, syscall.SIGSYS: true, syscall.SIGTRAP: true,
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT", syscall.SIGALRM: "SIGALRM", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGHUP: "SIGHUP", syscall.SIGILL: "SIGILL", syscall.SIGINT: "SIGINT", syscall.SIGKILL: "SIGKILL",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGQUIT: "SIGQUIT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGSYS: "SIGSYS",
	syscall.SIGTERM: "SIGTERM", syscall.SIGTRAP: "SIGTRAP", syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ",
}
