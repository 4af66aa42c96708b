//go:build linux

package mcp

import (
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/stress"
)

// openFDs counts the process's open file descriptors.
func openFDs() (int, error) {
	entries, err := os.ReadDir("/proc/self/fd")
	return len(entries) - 1, err // less ReadDir's own descriptor
}

// TestHostSurvivesConnectionFlood is issue 9's attack: a local process
// opens connections to the MCP port that send request headers announcing a
// body and never send it, or stop in the middle of the headers, and holds
// them. The host must not keep a descriptor per connection (the agent ran
// out of them and every prompt failed), and codex, authenticated, must keep
// being served: over a session opened before the flood and over new ones.
//
// Both ends of every connection live in this process, so the descriptor
// budget is sized for what the fixed host needs (the flood's client ends
// plus the cap): a host holding one descriptor per flood connection runs
// out of them.
func TestHostSurvivesConnectionFlood(t *testing.T) {
	const (
		maxUnauth = 64
		waves     = 4
		slack     = 64 // the legitimate clients' connections, both ends
	)
	// Connections: 20,000 as in the issue in CI; the quick loop's 2,000
	// are still 30 times the cap.
	want := stress.Size(t, 2000, 20000)
	// Timeouts far beyond the test's run: what protects the host here is
	// the unread 401 and the cap, not a deadline.
	h := newTestHost(t, &HostOptions{MaxUnauthenticatedConns: maxUnauth, ReadTimeout: time.Hour, IdleTimeout: time.Hour})
	token, _, mem := newSession(t, h, "/w/a.txt", "before\n")
	cs0 := dialHTTP(t, h.URL(), token) // codex, connected before the flood
	call(t, cs0, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"})

	// Client ends spread over several loopback addresses: 20,000 from one
	// address crowd its ephemeral ports and slow connect down a lot.
	dialer := func(i int) *net.Dialer { return &net.Dialer{Timeout: 10 * time.Second} }
	if c, err := net.DialTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, h.ln.Addr().(*net.TCPAddr)); err == nil {
		c.Close()
		dialer = func(i int) *net.Dialer {
			return &net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%8))}}
		}
	}
	base, err := openFDs()
	if err != nil {
		t.Skipf("cannot count descriptors: %v", err)
	}
	budget := uint64(base + want + maxUnauth + 2*slack)
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	n := want
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: budget, Max: max(budget, rl.Max)}); err != nil {
		// Cannot raise the hard limit: scale the flood down to it.
		budget = min(budget, rl.Max)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: budget, Max: rl.Max}); err != nil {
			t.Fatal(err)
		}
		n = int(budget) - base - maxUnauth - 2*slack
	}
	if n < 8*maxUnauth {
		t.Skipf("descriptor limit %d too low for a meaningful flood", rl.Max)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl) }) // after the flood's connections close

	var flood []net.Conn
	t.Cleanup(func() {
		for _, c := range flood {
			c.Close()
		}
	})
	addr := strings.TrimPrefix(strings.TrimSuffix(h.URL(), Path), "http://")
	attacks := []string{
		// Headers announcing a body that never comes.
		"POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
		// The same with a wrong token.
		"POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + strings.Repeat("0", 64) + "\r\nContent-Length: 200000\r\n\r\n{",
		// Headers that never end.
		"POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Len",
	}
	peak, calls := 0, 1
	for w := range waves {
		for i := range n / waves {
			c, err := dialer(i).Dial("tcp", addr)
			if err != nil {
				t.Fatalf("flood connection %d: %v", len(flood), err)
			}
			flood = append(flood, c)
			c.Write([]byte(attacks[i%len(attacks)])) // the host may have closed it already
		}
		// The accept queue is FIFO: the host sees every flood connection
		// before the new client's.
		cs := dialHTTP(t, h.URL(), token)
		content := strings.Repeat("wave\n", w+1)
		if res, sc := call(t, cs, fsops.ToolWriteTextFile, map[string]any{"path": "/w/a.txt", "content": content}); res.IsError {
			t.Fatalf("wave %d: write by a new session: %v", w, sc)
		}
		if _, sc := call(t, cs0, fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt"}); sc["content"] != content {
			t.Fatalf("wave %d: read by the old session: %v", w, sc)
		}
		calls += 2
		fds, err := openFDs()
		if err != nil {
			t.Fatalf("wave %d, %d flood connections: %v", w, len(flood), err)
		}
		peak = max(peak, fds)
	}
	if got, _ := getFile(mem, "/w/a.txt"); got != strings.Repeat("wave\n", waves) {
		t.Errorf("file = %q", got)
	}
	// The flood's own ends account for len(flood); the host may hold at
	// most the cap more, plus the real clients.
	hostSide := peak - base - len(flood)
	t.Logf("flood connections held open: %d; process descriptors: %d before, peak %d (host side %d, cap %d, limit %d); "+
		"unauthenticated connections closed by the cap: %d; tool calls served: %d",
		len(flood), base, peak, hostSide, maxUnauth, budget, h.ln.evictedCount(), calls)
	if hostSide > maxUnauth+slack {
		t.Errorf("the host held %d descriptors during the flood, want at most %d", hostSide, maxUnauth+slack)
	}
}

// evictedCount is how many connections the cap has closed.
func (l *guardListener) evictedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.evicted
}
