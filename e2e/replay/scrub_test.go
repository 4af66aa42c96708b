package replay_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/e2e/replay"
	"github.com/codexacp/codexacp/record"
)

// TestScrubbedTranscriptReplays scrubs transcripts as a user does before
// posting one (`codexacp record scrub FILE --replace OLD=NEW`): a text in
// a file the tools read and edited (a password, say) replaced by another of
// another length. The scrubbed transcript holds no trace of it and still
// replays: the content hashes the tools reported were recomputed. The same
// replacement made by hand (every occurrence of the text in the file, as
// sed would) fails the replay on the hashes. A transcript in the current
// form (".blobs": written with record.Write, its large values stored once)
// is scrubbed in every use of a blob and keeps its form.
func TestScrubbedTranscriptReplays(t *testing.T) {
	t.Parallel()
	type scrub struct {
		name, old, new string
		blobs          bool
	}
	tests := []scrub{
		// notes.txt (alpha, beta, gamma) read, edited and written by every tool.
		{"TestAllSevenToolsInAutoMode", "beta", "hunter2-was-here", false},
		{"TestAllSevenToolsInAutoMode.app-server", "beta", "hunter2-was-here", false},
		// config.toml's port, edited in the editor's buffer.
		{"TestEditGoesThroughEditorBuffer", "8080", "PORT", false},
		{"TestEditGoesThroughEditorBuffer.app-server", "8080", "PORT", false},
		// A stored rollout (a JSON text inside a string) and the answer
		// it holds, on a load after a restart.
		{"TestSessionLoadAfterRestart", "the answer is", "my secret is", false},
		// The same, the rollout stored as a blob over several lines, and
		// the files of the seven tools.
		{"TestSessionLoadAfterRestart", "the answer is", "my secret is", true},
		{"TestAllSevenToolsInAutoMode.app-server", "beta", "hunter2-was-here", true},
	}
	caseName := func(tt scrub) string {
		if tt.blobs {
			return tt.name + ".blobs"
		}
		return tt.name
	}
	// The tools' files on exec, a stored rollout, blobs on the app-server.
	// The cases run one after another (each replays twice, the second
	// replay waiting for the first): the test holds one replay's place from
	// the start rather than queue its cases behind the corpus's, where
	// their second replays made a tail.
	tests = quick(t, tests, caseName, "TestAllSevenToolsInAutoMode", "TestSessionLoadAfterRestart", "TestAllSevenToolsInAutoMode.app-server.blobs")
	for _, tt := range tests {
		name := caseName(tt)
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(corpusDir, tt.name+".ndjson")
			orig, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(orig, []byte(tt.old)) {
				t.Fatalf("%s does not hold %q", src, tt.old)
			}
			if tt.blobs {
				entries, err := record.Read(bytes.NewReader(orig))
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := record.Write(&buf, entries); err != nil {
					t.Fatal(err)
				}
				if orig = buf.Bytes(); !bytes.Contains(orig, []byte(`"kind":"blob"`)) {
					t.Fatalf("no blob in %s written in the current form", src)
				}
			}
			dir := t.TempDir()
			path := filepath.Join(dir, tt.name+".ndjson")
			if err := os.WriteFile(path, orig, 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(opts.Agent, "record", "scrub", path, "--replace", tt.old+"="+tt.new).CombinedOutput()
			if err != nil {
				t.Fatalf("record scrub: %v\n%s", err, out)
			}
			t.Logf("%s", out)
			scrubbed, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(scrubbed, []byte(tt.old)) {
				t.Errorf("the scrubbed transcript still holds %q", tt.old)
			}
			if tt.blobs {
				checkLineBound(t, scrubbed)
				if !bytes.Contains(scrubbed, []byte(`"kind":"blob"`)) {
					t.Errorf("the scrubbed transcript lost its blobs")
				}
			}
			if res := replayFile(t, path); !res.Match() {
				t.Errorf("the scrubbed transcript does not replay")
			}

			// By hand: the replay fails wherever a hash covers the text.
			byHand := filepath.Join(dir, "by-hand.ndjson")
			if err := os.WriteFile(byHand, bytes.ReplaceAll(orig, []byte(tt.old), []byte(tt.new)), 0o600); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), " 0 content hashes") {
				res, err := replay.Run(context.Background(), byHand, opts)
				if err != nil {
					t.Fatal(err)
				}
				endedWithoutWaiting(t, res)
				if res.Match() {
					t.Errorf("the transcript edited by hand replays too: the scrub's hashes prove nothing")
				}
			}
		})
	}
}
