package e2e_test

import (
	"bufio"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// TestToolsWithProxyInEnvironment: a user whose environment names an HTTP
// proxy (HTTP_PROXY, http_proxy, ALL_PROXY; common behind a corporate
// firewall) still gets the file tools. codex's HTTP client honours those
// variables for http:// URLs, loopback included, so without a NO_PROXY
// entry codex 0.171 sent the tool host's handshake, bearer token and all,
// to the proxy, and every thread failed to start ("required MCP servers
// failed to initialize"). The proxy here reads each request line and
// closes the connection; it must see none for a loopback address (codex's
// own requests to the internet, such as its plugin sync, may use it).
func TestToolsWithProxyInEnvironment(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		var mu sync.Mutex
		var loopback []string // request lines for 127.0.0.1
		go func() {
			for {
				c, err := ln.Accept()
				if errors.Is(err, net.ErrClosed) {
					return
				} else if err != nil {
					continue
				}
				go func() {
					defer c.Close()
					c.SetReadDeadline(time.Now().Add(10 * time.Second))
					line, _ := bufio.NewReader(c).ReadString('\n')
					if strings.Contains(line, "127.0.0.1") {
						mu.Lock()
						loopback = append(loopback, strings.TrimSpace(line))
						mu.Unlock()
					}
				}()
			}
		}()
		proxy := "http://" + ln.Addr().String()
		e := start(t, setup{backend: backend, env: []string{"HTTP_PROXY=" + proxy, "http_proxy=" + proxy, "ALL_PROXY=" + proxy}})
		p := e.writeFile("notes.txt", "behind a proxy\n")
		e.mock.Enqueue(
			mockapi.Reply(acpCall(t, "call_read", "read_text_file", map[string]any{"path": p})),
			mockapi.Reply(mockapi.Message("read it")),
		)
		if _, err := e.prompt("read notes.txt"); err != nil {
			t.Fatalf("prompt: %v", err)
		}
		if out := toolOutput(t, e, "call_read"); !strings.Contains(out, "behind a proxy") {
			t.Errorf("read_text_file output = %q, want the file's content", out)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(loopback) != 0 {
			t.Errorf("the proxy got requests for loopback (the tool host, the model): %q", loopback)
		}
	})
}
