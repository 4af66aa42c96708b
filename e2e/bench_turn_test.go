package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codexacp/codexacp/e2e/codextest"
	"github.com/codexacp/codexacp/e2e/mockapi"
)

// captureWrapper writes a shell script that records the argv and environment
// it was started with into dir, then execs codex. Both sides of the
// comparison run through it, so it costs them the same.
func captureWrapper(tb testing.TB, codexPath, dir string) string {
	tb.Helper()
	script := fmt.Sprintf(`#!/bin/sh
if [ -n "$CAPTURE_DIR" ]; then
  printf '%%s\0' "$@" > "$CAPTURE_DIR/args"
  env -0 > "$CAPTURE_DIR/env"
  pwd > "$CAPTURE_DIR/cwd"
fi
exec %q "$@"
`, codexPath)
	path := filepath.Join(dir, "codex-wrapper")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		tb.Fatal(err)
	}
	return path
}

func readNulList(tb testing.TB, path string) []string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// BenchmarkTurnVsRawCodex times the same scripted text turn through codexacp
// (ACP prompt → codex exec → session updates → response) and through raw
// `codex exec --json` started with exactly the arguments and environment
// codexacp used, interleaved, and reports the median ratio. Each agent turn
// runs in a new session, so both sides start a new codex thread.
func BenchmarkTurnVsRawCodex(b *testing.B) {
	codexPath := codextest.Binary(b)
	wrapper := captureWrapper(b, codexPath, b.TempDir())
	captureDir := b.TempDir()
	os.Setenv("CAPTURE_DIR", captureDir) // inherited by the agent and so by codex
	defer os.Unsetenv("CAPTURE_DIR")
	e := start(b, setup{backend: "exec", fs: true, codexPath: wrapper})

	runAgent := func() time.Duration {
		e.session = e.newSession()
		e.mock.Enqueue(mockapi.Reply(mockapi.Message("benchmark answer")))
		t0 := time.Now()
		e.mustPrompt("say something")
		return time.Since(t0)
	}
	runRaw := func(args, env []string, cwd string) time.Duration {
		e.mock.Enqueue(mockapi.Reply(mockapi.Message("benchmark answer")))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, wrapper, args...)
		cmd.Env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "CAPTURE_DIR=") })
		cmd.Dir = cwd
		cmd.Stdin = strings.NewReader("say something")
		var out bytes.Buffer
		cmd.Stdout = &out
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("raw codex: %v", err)
		}
		d := time.Since(t0)
		if !bytes.Contains(out.Bytes(), []byte(`"turn.completed"`)) {
			b.Fatalf("raw codex turn did not complete: %s", out.String())
		}
		return d
	}

	capture := func() (args, env []string, cwd string) {
		cwdB, err := os.ReadFile(filepath.Join(captureDir, "cwd"))
		if err != nil {
			b.Fatal(err)
		}
		return readNulList(b, filepath.Join(captureDir, "args")), readNulList(b, filepath.Join(captureDir, "env")), strings.TrimSpace(string(cwdB))
	}

	// Warm up (the first run in a CODEX_HOME is slower) and capture the exact
	// command line codexacp uses; the session it belongs to stays open, so its
	// tool-server token stays valid for the raw runs.
	runAgent()
	args, env, cwd := capture()
	runRaw(args, env, cwd)
	var agentTimes, rawTimes []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Alternate which side runs first.
		if i%2 == 0 {
			agentTimes = append(agentTimes, runAgent())
			rawTimes = append(rawTimes, runRaw(args, env, cwd))
		} else {
			rawTimes = append(rawTimes, runRaw(args, env, cwd))
			agentTimes = append(agentTimes, runAgent())
		}
		args, env, cwd = capture()
	}
	b.StopTimer()
	ratios := make([]float64, len(agentTimes))
	for i := range agentTimes {
		ratios[i] = float64(agentTimes[i]) / float64(rawTimes[i])
	}
	b.ReportMetric(float64(median(agentTimes).Microseconds())/1000, "agent-ms")
	b.ReportMetric(float64(median(rawTimes).Microseconds())/1000, "raw-ms")
	b.ReportMetric(medianFloat(ratios), "ratio")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianFloat(f []float64) float64 {
	s := slices.Clone(f)
	slices.Sort(s)
	return s[len(s)/2]
}
