package codex

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

// One process answers every question until it has been idle for Idle; the
// next question then starts another. Questions after Close fail.
func TestConfigServer(t *testing.T) {
	logs := &syncBuf{}
	cs := &ConfigServer{Idle: time.Hour, Options: AppServerOptions{
		Path:   os.Args[0],
		Env:    append(os.Environ(), fakeAppServerEnv+"=", "GORACE=atexit_sleep_ms=0"),
		Grace:  500 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}}
	defer cs.Close()
	ctx := context.Background()
	starts := func() int { return strings.Count(logs.String(), `msg="codex app-server started"`) }

	user, err := cs.ReadUserConfig(ctx, "")
	if err != nil || user.SandboxMode != "" || user.ApprovalPolicy != ApprovalNever {
		t.Fatalf("config/read without a cwd: %+v, %v", user, err)
	}
	project, err := cs.ReadUserConfig(ctx, "/w")
	if err != nil || project.SandboxMode != SandboxWorkspaceWrite {
		t.Fatalf("config/read with a cwd: %+v, %v", project, err)
	}
	skills, err := cs.ListSkills(ctx, "/w")
	if err != nil || len(skills) != 1 || skills[0] != (Skill{Name: "greet", Description: "Say hello", Path: "/w/.agents/skills/greet/SKILL.md", Scope: "repo"}) {
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
