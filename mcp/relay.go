package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The relay: codex runs the agent's own executable as a stdio MCP server
// (RelayArg), and that process forwards MCP's newline-delimited JSON-RPC
// between its stdin/stdout and the agent's relay socket (Host.Relay). Codex
// then starts a small process instead of building an HTTP client for a
// streamable HTTP server, which costs it 44–113 ms per thread (it loads the
// system's root certificates; docs/benchmarks.md).
//
// What the relay needs comes in its environment, which codex's config
// gives it (never its command line): the socket, the session's token and
// the message bound.
const (
	// RelayArg is the relay's (hidden) subcommand: `codexacp mcp-relay`.
	RelayArg = "mcp-relay"
	// RelaySocketEnv names the agent's relay socket (an absolute path).
	RelaySocketEnv = "CODEXACP_MCP_SOCKET"
	// RelayTokenEnv carries the session's token.
	RelayTokenEnv = "CODEXACP_MCP_TOKEN"
	// RelayMaxEnv is the largest message (bytes) the relay passes to the
	// agent, the host's MaxRequestBodyBytes.
	RelayMaxEnv = "CODEXACP_MCP_RELAY_MAX"
)

// relayDialTimeout bounds connecting to the agent's socket.
const relayDialTimeout = 10 * time.Second

// maxTokenLine bounds the first line a relay sends (its token): Register's
// tokens are 64 hex digits.
const maxTokenLine = 128

// idPrefix is how much of an oversize message the relay keeps to find its
// JSON-RPC id (codex sends "jsonrpc" and "id" before "params").
const idPrefix = 4 << 10

// relayBuffer is the size of the relay's read buffers.
const relayBuffer = 64 << 10

// RunRelay is the relay process: it connects to the agent's socket named in
// getenv(RelaySocketEnv), authenticates with getenv(RelayTokenEnv), then
// passes each line of stdin to the agent and everything the agent sends to
// stdout, until either side ends. A message from codex larger than the bound
// is not passed on: a request gets a JSON-RPC error saying how to write in
// parts, as the HTTP host's 413 does. Nothing but the agent's messages and
// those errors is written to stdout; the reason it stopped goes in the
// error (for stderr, which codex logs).
//
// It returns nil when codex closed stdin, an error when the agent is gone
// (its socket closed: the agent exited or revoked the token) or cannot be
// reached.
func RunRelay(stdin io.Reader, stdout io.Writer, getenv func(string) string) error {
	socket, token := getenv(RelaySocketEnv), getenv(RelayTokenEnv)
	switch {
	case socket == "" || !filepath.IsAbs(socket):
		return fmt.Errorf("mcp relay: %s must name the agent's socket by an absolute path", RelaySocketEnv)
	case token == "" || len(token) >= maxTokenLine || bytes.ContainsAny([]byte(token), "\r\n"):
		return fmt.Errorf("mcp relay: %s must hold the session's token", RelayTokenEnv)
	}
	limit := int64(DefaultMaxRequestBodyBytes)
	if s := getenv(RelayMaxEnv); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("mcp relay: %s=%q: want a positive number of bytes", RelayMaxEnv, s)
		}
		limit = n
	}
	if err := checkPrivateDir(filepath.Dir(socket)); err != nil {
		return fmt.Errorf("mcp relay: not the agent's socket: %w", err)
	}
	conn, err := net.DialTimeout("unix", socket, relayDialTimeout)
	if err != nil {
		return fmt.Errorf("mcp relay: cannot reach the agent: %w", err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, token+"\n"); err != nil {
		return fmt.Errorf("mcp relay: cannot reach the agent: %w", err)
	}

	out := &lineWriter{w: stdout}
	agentDone := make(chan error, 1)
	codexDone := make(chan error, 1)
	go func() { agentDone <- copyLines(out, conn) }()
	go func() { codexDone <- forwardBounded(conn, stdin, out, limit) }()
	return relayEnd(agentDone, codexDone)
}

// relayEnd waits for the first of the relay's two directions to end and
// says why the relay stops.
func relayEnd(agentDone, codexDone <-chan error) error {
	agentGone := func(err error) error {
		// A reset is the agent closing with codex's last message unread.
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			return fmt.Errorf("mcp relay: the agent's connection failed: %w", err)
		}
		return errors.New("mcp relay: the agent closed the connection (it exited, or refused the token)")
	}
	select {
	case err := <-agentDone:
		return agentGone(err)
	case err := <-codexDone:
		// A write to the agent fails when its end closed (a refused
		// token: codex's first message follows the token at once), often
		// before the read sees the end: say so as the read does.
		var werr *agentWriteError
		if errors.As(err, &werr) {
			select {
			case aerr := <-agentDone:
				return agentGone(aerr)
			case <-time.After(relayDialTimeout):
			}
		}
		// Otherwise codex closed stdin (or it failed): the agent's end of
		// the session closes with the connection.
		if err != nil {
			return fmt.Errorf("mcp relay: %w", err)
		}
		return nil
	}
}

// lineWriter writes whole lines to w, one writer at a time: the agent's
// messages and the relay's own errors never interleave.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// copyLines copies the agent's lines from r to out until r ends; a line
// is written as it arrives, in pieces when it is long, holding out for
// the whole line. An unterminated last line is dropped when it fits the
// buffer (the agent stopped mid-message); a longer one has been passed on
// in part by then. It returns nil at the end of r.
func copyLines(out *lineWriter, r io.Reader) error {
	br := bufio.NewReaderSize(r, relayBuffer)
	for {
		// Wait for a line's first bytes before taking out.
		if _, err := br.Peek(1); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		out.mu.Lock()
		err := func() error {
			for first := true; ; first = false {
				frag, err := br.ReadSlice('\n')
				if err != nil && !errors.Is(err, bufio.ErrBufferFull) && first {
					return err // nothing of this line written: drop it
				}
				if _, werr := out.w.Write(frag); werr != nil {
					return fmt.Errorf("writing to codex: %w", werr)
				}
				if !errors.Is(err, bufio.ErrBufferFull) {
					return err
				}
			}
		}()
		out.mu.Unlock()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// forwardBounded passes each line of r (codex's messages) to agent. A line
// longer than limit is dropped; if it is a request, codex gets an error
// answer on out. It returns nil at the end of r.
func forwardBounded(agent io.Writer, r io.Reader, out *lineWriter, limit int64) error {
	br := bufio.NewReaderSize(r, relayBuffer)
	var line []byte
	for {
		line = line[:0]
		oversize := false
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			if !oversize {
				if int64(len(line)+len(frag)) > limit+1 { // +1: the newline
					oversize = true
					if len(line) < idPrefix {
						line = append(line, frag[:min(len(frag), idPrefix-len(line))]...)
					}
				} else {
					line = append(line, frag...)
				}
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading codex's messages: %w", err)
		}
		switch {
		case oversize:
			if id := requestID(line); id != nil {
				if werr := writeTooLarge(out, id, limit); werr != nil {
					return werr
				}
			}
		case len(bytes.TrimSpace(line)) > 0:
			if line[len(line)-1] != '\n' {
				line = append(line, '\n') // the last line, unterminated
			}
			if _, werr := agent.Write(line); werr != nil {
				return &agentWriteError{werr}
			}
		}
		if err != nil { // io.EOF
			return nil
		}
		if cap(line) > relayBuffer {
			line = nil // do not keep a large message's buffer
		}
	}
}

// agentWriteError is a failed write to the agent's socket: its end closed
// (or failed), which the other direction's read sees too.
type agentWriteError struct{ err error }

func (e *agentWriteError) Error() string { return "writing to the agent: " + e.err.Error() }
func (e *agentWriteError) Unwrap() error { return e.err }

// requestID returns the "id" of the JSON-RPC request whose beginning is
// prefix, or nil when prefix does not show one before the message is cut.
func requestID(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if key == "id" {
			if bytes.Equal(v, []byte("null")) {
				return nil
			}
			return v
		}
	}
	return nil
}

// writeTooLarge answers request id with the error the model is shown.
func writeTooLarge(out *lineWriter, id json.RawMessage, limit int64) error {
	msg, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{Code: -32600, Message: tooLargeMessage(limit)}})
	if err != nil {
		return err
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	if _, err := out.w.Write(append(msg, '\n')); err != nil {
		return fmt.Errorf("writing to codex: %w", err)
	}
	return nil
}

// tooLargeMessage says what to do with a message over limit bytes (the
// model reads it).
func tooLargeMessage(limit int64) string {
	return fmt.Sprintf("request body exceeds %d bytes: write a large file in parts, each ending at a line "+
		"end (write_text_file with the first part, then append_text_file with the next, which adds whole lines)",
		limit)
}
