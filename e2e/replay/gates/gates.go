// Package gates keeps a replay's editor side and its fake codex processes in
// step (docs/replay.md): each fake process marks how far it got (the run it
// claimed, the line it just wrote), and waits at gates the harness opens
// once the agent messages that preceded a point in the recording have
// arrived.
//
// The harness listens on loopback (Listen) and names the address to the
// fake codex (CODEXACP_FAKE_GATES); each fake process dials it once (Dial).
// Marks and gates travel as lines on that connection, and both sides wait
// on channels: no file per line and no polling, which a replay of the whole
// corpus once spent most of its CPU time on.
//
//	srv, _ := gates.Listen()     // harness
//	srv.Open("gate-12")
//	srv.WaitMark(ctx, "line-9")
//
//	c, _ := gates.Dial(addr)     // fake codex
//	c.Mark("line-9")
//	c.Wait(ctx, "gate-12")
package gates

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
)

// AnotherWay is the gate the harness opens once the agent went another
// way than recorded: the replay has failed, and a fake process no longer
// holds back what codex would send whatever the agent does next (the
// answer to a skills listing) for a point of the recording that is not
// coming.
const AnotherWay = "another-way"

// The two kinds of line on a connection.
const (
	markPrefix = "mark " // fake → harness
	openPrefix = "open " // harness → fake
)

// Server is the harness's side: it opens gates for every fake process of
// one replay and collects their marks.
type Server struct {
	ln net.Listener

	mu      sync.Mutex
	opened  []string // in order, sent to each process as it connects
	marks   map[string]bool
	changed chan struct{} // closed (and replaced) on each new mark
	conns   map[net.Conn]bool
	closed  bool
	wg      sync.WaitGroup // the accept loop and the connections' readers
}

// Listen starts a server on a loopback port.
func Listen() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("gates: %w", err)
	}
	s := &Server{ln: ln, marks: map[string]bool{}, changed: make(chan struct{}), conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the address the fake codex dials (CODEXACP_FAKE_GATES).
func (s *Server) Addr() string { return s.ln.Addr().String() }

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.Close()
			return
		}
		// Under the lock: a gate opened meanwhile is sent after these.
		for _, name := range s.opened {
			fmt.Fprintf(conn, "%s%s\n", openPrefix, name)
		}
		s.conns[conn] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go s.read(conn)
	}
}

// read takes in one process's marks until it disconnects.
func (s *Server) read(conn net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		conn.Close()
	}()
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		name, ok := strings.CutPrefix(sc.Text(), markPrefix)
		if !ok {
			continue
		}
		s.mu.Lock()
		if !s.marks[name] {
			s.marks[name] = true
			close(s.changed)
			s.changed = make(chan struct{})
		}
		s.mu.Unlock()
	}
}

// Open opens the gate called name for every fake process, connected now or
// later.
func (s *Server) Open(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opened = append(s.opened, name)
	for conn := range s.conns {
		// A process that is gone is gone; its reader drops it.
		fmt.Fprintf(conn, "%s%s\n", openPrefix, name)
	}
}

// Marked reports whether some process made the mark called name.
func (s *Server) Marked(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.marks[name]
}

// WaitMark waits until some process made the mark called name; false when
// ctx ended first.
func (s *Server) WaitMark(ctx context.Context, name string) bool {
	for {
		s.mu.Lock()
		marked, changed := s.marks[name], s.changed
		s.mu.Unlock()
		if marked {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// Close stops listening and ends every connection; the processes' waits
// then end unopened.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for conn := range s.conns {
		conn.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

// Client is a fake codex process's side.
type Client struct {
	conn net.Conn

	writeMu sync.Mutex

	mu      sync.Mutex
	opened  map[string]bool
	waiting map[string]chan struct{} // closed when the gate opens
	lost    chan struct{}            // closed when the harness is gone
}

// Dial connects to the harness at addr.
func Dial(addr string) (*Client, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("gates: %w", err)
	}
	c := &Client{conn: conn, opened: map[string]bool{}, waiting: map[string]chan struct{}{}, lost: make(chan struct{})}
	go c.read()
	return c, nil
}

func (c *Client) read() {
	defer close(c.lost)
	sc := bufio.NewScanner(c.conn)
	for sc.Scan() {
		name, ok := strings.CutPrefix(sc.Text(), openPrefix)
		if !ok {
			continue
		}
		c.mu.Lock()
		c.opened[name] = true
		if ch := c.waiting[name]; ch != nil {
			close(ch)
			delete(c.waiting, name)
		}
		c.mu.Unlock()
	}
}

// Mark tells the harness this process got as far as name.
func (c *Client) Mark(name string) error {
	if strings.ContainsAny(name, "\r\n") {
		return errors.New("gates: a mark's name is one line")
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := fmt.Fprintf(c.conn, "%s%s\n", markPrefix, name); err != nil {
		return fmt.Errorf("gates: marking %s: %w", name, err)
	}
	return nil
}

// Wait waits for the harness to open the gate called name; false when ctx
// ended or the harness went away first.
func (c *Client) Wait(ctx context.Context, name string) bool {
	c.mu.Lock()
	if c.opened[name] {
		c.mu.Unlock()
		return true
	}
	ch := c.waiting[name]
	if ch == nil {
		ch = make(chan struct{})
		c.waiting[name] = ch
	}
	c.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-c.lost:
		// Opened just before the harness left?
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.opened[name]
	case <-ctx.Done():
		return false
	}
}

// Close ends the connection.
func (c *Client) Close() error { return c.conn.Close() }
