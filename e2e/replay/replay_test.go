package replay_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codexacp/codexacp/e2e/replay"
	"github.com/codexacp/codexacp/internal/acpschema"
)

// corpusDir holds the transcripts recorded from the e2e suite.
const corpusDir = "../testdata/transcripts"

// minCorpus is the corpus size the project promises (issue 6).
const minCorpus = 15

var opts replay.Options

// TestMain builds the agent and the fake codex once.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "codexacp-replay-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	opts = replay.Options{Agent: filepath.Join(dir, "codexacp"), FakeCodex: filepath.Join(dir, "fakecodex")}
	for bin, pkg := range map[string]string{
		opts.Agent:     "github.com/codexacp/codexacp/cmd/codexacp",
		opts.FakeCodex: "github.com/codexacp/codexacp/e2e/fakecodex",
	} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func corpus(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < minCorpus {
		t.Fatalf("the corpus has %d transcripts, want at least %d (record it: see docs/replay.md)", len(files), minCorpus)
	}
	return files
}

// TestCorpus replays every transcript of the corpus against the agent and
// the fake codex.
func TestCorpus(t *testing.T) {
	for _, path := range corpus(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".ndjson")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := replayFile(t, path)
			if !res.Match() {
				t.Errorf("replay of %s does not match the recording", path)
			}
			for _, raw := range res.Raw {
				if err := acpschema.ValidateMessage(raw); err != nil {
					t.Errorf("agent message violates the ACP schema: %v\n%s", err, raw)
				}
			}
			t.Logf("replayed %d agent messages in %v", len(res.Got), res.Elapsed.Round(time.Millisecond))
		})
	}
}

// replayFile replays path and reports how it went wrong, if it did.
func replayFile(t *testing.T, path string) *replay.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := replay.Run(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Match() {
		if res.Incomplete != "" {
			t.Logf("replay incomplete: %s", res.Incomplete)
		}
		t.Logf("%s", replay.Diff(res.Want, res.Got))
		t.Logf("agent stderr:\n%s", res.Stderr)
	}
	return res
}
