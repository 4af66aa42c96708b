//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
)

// agentProc is an ACP agent the bench started in its own process group,
// with its stdio piped to the bench. The bench owns it: whoever started it
// ends it (end, or runACP's measured shutdown).
type agentProc struct {
	cmd    *exec.Cmd
	pid    int
	stdin  io.WriteCloser
	stdout io.Reader
	stderr *stderrTail
	exited chan error // receives cmd.Wait's result once
}

// startAgentProc starts argv in cwd with env, its stderr kept in stderr.
func startAgentProc(argv, env []string, cwd string, stderr *stderrTail) (*agentProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &agentProc{cmd: cmd, pid: cmd.Process.Pid, stdin: stdin, stdout: stdout, stderr: stderr, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	return p, nil
}

// end closes the agent's stdin and waits up to a second for it to exit;
// then its process group gets SIGTERM and, exitWait later, SIGKILL. A
// non-nil err comes back wrapped as what's error, with the tail of the
// agent's stderr.
func (p *agentProc) end(what string, err error) error {
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(time.Second):
		_ = syscall.Kill(-p.pid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(exitWait):
			_ = syscall.Kill(-p.pid, syscall.SIGKILL)
			<-p.exited
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w\nagent stderr (tail):\n%s", what, err, lastLines(p.stderr.String(), 20))
	}
	return nil
}

// openSession is a cold run's start: initialize, then session/new in cwd
// (the timed runs of runACP time each apart).
func (ed *editor) openSession(ctx context.Context, cwd string) (acpsdk.NewSessionResponse, error) {
	if _, err := ed.initialize(ctx); err != nil {
		return acpsdk.NewSessionResponse{}, fmt.Errorf("initialize: %w", err)
	}
	sess, err := ed.conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		return acpsdk.NewSessionResponse{}, fmt.Errorf("session/new: %w", err)
	}
	return sess, nil
}
