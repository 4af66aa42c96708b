package appserver

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/internal/goroutines"
)

// One process answers every question until it has been idle for Idle; the
// next question then starts another. Questions after Close fail.
func TestConfigServer(t *testing.T) {
	logs := &syncBuf{}
	cs := &ConfigServer{Idle: time.Hour, Options: Options{
		Path:   os.Args[0],
		Env:    append(os.Environ(), fakeAppServerEnv+"=", "GORACE=atexit_sleep_ms=0"),
		Grace:  500 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}}
	defer cs.Close()
	ctx := context.Background()
	starts := func() int { return strings.Count(logs.String(), `msg="codex app-server started"`) }

	user, err := cs.ReadUserConfig(ctx, "")
	if err != nil || user.SandboxMode != "" || user.ApprovalPolicy != codex.ApprovalNever {
		t.Fatalf("config/read without a cwd: %+v, %v", user, err)
	}
	project, err := cs.ReadUserConfig(ctx, "/w")
	if err != nil || project.SandboxMode != codex.SandboxWorkspaceWrite {
		t.Fatalf("config/read with a cwd: %+v, %v", project, err)
	}
	skills, err := cs.ListSkills(ctx, "/w")
	if err != nil || len(skills) != 1 || skills[0] != (codex.Skill{Name: "greet", Description: "Say hello", Path: "/w/.agents/skills/greet/SKILL.md", Scope: "repo"}) {
		t.Fatalf("skills = %+v, %v; want the enabled one", skills, err)
	}
	if n := starts(); n != 1 {
		t.Errorf("%d processes for three questions, want 1", n)
	}

	// Idle: the timer ends the process; a question starts another.
	cs.mu.Lock()
	cs.Idle = time.Millisecond
	cs.mu.Unlock()
	if _, err := cs.ListSkills(ctx, "/w"); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(logs.String(), `msg="codex app-server exited"`) {
		time.Sleep(5 * time.Millisecond) // waits for an event; no duration is asserted
	}
	if _, err := cs.ListSkills(ctx, "/w"); err != nil {
		t.Fatal(err)
	}
	if n := starts(); n != 2 {
		t.Errorf("%d processes, want a second one after the idle end", n)
	}

	cs.Close()
	if _, err := cs.ListSkills(ctx, "/w"); err == nil {
		t.Error("a question after Close was answered")
	}
}

// fakeConfigServer is a ConfigServer on the fake app-server; its starts
// are counted and kept.
func fakeConfigServer() (*ConfigServer, *fakeStarts) {
	starts := &fakeStarts{}
	cs := &ConfigServer{Idle: time.Hour, Options: Options{
		Path:   os.Args[0],
		Env:    append(os.Environ(), fakeAppServerEnv+"=", "GORACE=atexit_sleep_ms=0"),
		Grace:  500 * time.Millisecond,
		Logger: slogDiscard,
	}}
	cs.start = func(ctx context.Context, opts Options) (*Server, error) {
		s, err := startConfigOnly(ctx, opts)
		if err == nil {
			starts.add(s)
		}
		return s, err
	}
	return cs, starts
}

type fakeStarts struct {
	mu      sync.Mutex
	servers []*Server
}

func (f *fakeStarts) add(s *Server) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.servers = append(f.servers, s)
}

func (f *fakeStarts) all() []*Server {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.servers)
}

// A server that crashed is closed (its client's goroutines and handler
// context released) when the next question starts another.
func TestConfigServerClosesCrashedServer(t *testing.T) {
	before := goroutines.Take()
	cs, starts := fakeConfigServer()
	ctx := context.Background()
	err := cs.ask(ctx, func(s *Server) error { return s.Call(ctx, "crash", nil, nil) })
	if err == nil {
		t.Fatal("the crash call was answered")
	}
	crashed := starts.all()[0]
	<-crashed.Done()
	if _, err := cs.ReadUserConfig(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if n := len(starts.all()); n != 2 {
		t.Fatalf("%d starts, want a second after the crash", n)
	}
	if !crashed.closing.Load() {
		t.Error("the crashed server was dropped without Close")
	}
	cs.Close()
	if left := before.Leaked("github.com/codexacp/codexacp/codex"); len(left) > 0 { // codex and its packages
		t.Errorf("goroutines left:\n%s", goroutines.Stacks(left))
	}
}

// Close cancels a start in progress and waits for it, and for Warm's and
// the idle timer's goroutines: when it returns, what the start made has
// been closed and no goroutine of the ConfigServer is left.
func TestConfigServerCloseWaitsForItsGoroutines(t *testing.T) {
	before := goroutines.Take()
	cs, starts := fakeConfigServer()
	started := make(chan struct{})
	start := cs.start
	var cancelled bool
	cs.start = func(ctx context.Context, opts Options) (*Server, error) {
		close(started)
		<-ctx.Done()
		cancelled = true
		// A start whose process came up just as Close cancelled it.
		return start(context.Background(), opts)
	}
	cs.Warm()
	<-started
	cs.Close()
	if !cancelled {
		t.Fatal("Close returned before the start it cancelled had ended")
	}
	servers := starts.all()
	if len(servers) != 1 {
		t.Fatalf("%d starts, want 1", len(servers))
	}
	select {
	case <-servers[0].Done():
	default:
		t.Error("the server started as Close came is still running")
	}
	if _, err := cs.ListSkills(context.Background(), "/w"); !errors.Is(err, errConfigServerClosed) {
		t.Errorf("a question after Close: %v", err)
	}
	if left := before.Leaked("github.com/codexacp/codexacp/codex"); len(left) > 0 { // codex and its packages
		t.Errorf("goroutines left:\n%s", goroutines.Stacks(left))
	}

	// An armed idle timer is disarmed, one that fired is waited for.
	before = goroutines.Take()
	cs, _ = fakeConfigServer()
	if _, err := cs.ReadUserConfig(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	if left := before.Leaked("github.com/codexacp/codexacp/codex"); len(left) > 0 { // codex and its packages
		t.Errorf("goroutines left:\n%s", goroutines.Stacks(left))
	}
}

// With nothing configured, ConfigServer.UserConfig answers without starting
// codex (the path names no program); with a setting in config.toml it
// starts codex, which here fails.
func TestUserConfigSkipsCodexWhenUnset(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the shortcut is Linux only")
	}
	if _, err := os.Stat("/etc/codex"); err == nil { // codex's system layers
		t.Skip("/etc/codex exists on this machine")
	}
	home := t.TempDir()
	opts := Options{Path: filepath.Join(t.TempDir(), "no-codex"), Env: []string{"CODEX_HOME=" + home}}
	cs := &ConfigServer{Options: opts}
	defer cs.Close()
	got, err := cs.UserConfig(context.Background())
	if err != nil || got.Configured() {
		t.Fatalf("nothing configured: %+v, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("approval_policy = \"never\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.UserConfig(context.Background()); err == nil {
		t.Fatal("with a setting, codex was not asked")
	}
}

// idleClock stands in for the ConfigServer's idle timer: it keeps the
// durations armed, and fires the last timer when told.
type idleClock struct {
	mu     sync.Mutex
	armed  []time.Duration
	timer  *time.Timer
	expire func()
}

func (c *idleClock) afterFunc(d time.Duration, f func()) *time.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = append(c.armed, d)
	// A real timer that never fires by itself, so that Stop behaves as
	// the ConfigServer expects; fire runs f in its place.
	c.timer, c.expire = time.AfterFunc(time.Hour, f), f
	return c.timer
}

func (c *idleClock) durations() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.armed)
}

// fire expires the last armed timer, as its time passing would; false
// when it had been disarmed.
func (c *idleClock) fire() bool {
	c.mu.Lock()
	timer, f := c.timer, c.expire
	c.mu.Unlock()
	if timer == nil || !timer.Stop() {
		return false
	}
	f()
	return true
}

// A warm-started server waits for its first question as long as
// DefaultConfigServerIdle, however short Idle is; once it has answered, it
// ends after Idle without another (the exec backend keeps it only for
// the listings and reads a session/new asks), and the next question starts
// it again.
func TestConfigServerIdleCountsFromItsQuestions(t *testing.T) {
	cs, starts := fakeConfigServer()
	clock := &idleClock{}
	cs.afterFunc = clock.afterFunc
	cs.Idle = time.Second
	defer cs.Close()

	cs.Warm()
	deadline := time.Now().Add(30 * time.Second)
	for len(clock.durations()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("Warm's start never armed the idle timer")
		}
		time.Sleep(time.Millisecond) // waits for an event; no duration is asserted
	}
	if got := clock.durations(); !slices.Equal(got, []time.Duration{DefaultConfigServerIdle}) {
		t.Fatalf("idle timers after Warm: %v, want %v: a warm server waits for its first question", got, DefaultConfigServerIdle)
	}

	ctx := context.Background()
	if _, err := cs.ListSkills(ctx, "/w"); err != nil {
		t.Fatal(err)
	}
	if got := clock.durations(); len(got) != 2 || got[1] != time.Second {
		t.Fatalf("idle timers after a question: %v, want Idle (1s) last", got)
	}
	if n := len(starts.all()); n != 1 {
		t.Fatalf("%d starts, want the warm one answering", n)
	}
	if !clock.fire() {
		t.Fatal("the idle timer was disarmed")
	}
	<-starts.all()[0].Done() // ended by the idle timer

	// On demand again: a question starts another, which then ends after
	// Idle as well.
	if _, err := cs.ReadUserConfig(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if n := len(starts.all()); n != 2 {
		t.Fatalf("%d starts, want a second after the idle end", n)
	}
	if got := clock.durations(); got[len(got)-1] != time.Second {
		t.Errorf("idle timers: %v, want Idle after the restarted server's question", got)
	}
}
