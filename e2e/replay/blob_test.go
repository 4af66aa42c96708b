package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/e2e/replay"
	"github.com/codexacp/codexacp/record"
)

// TestRecordingStoresLargePayloadsOnce records replays of sessions with
// the model catalog, the skills (their slash commands, a skills listing)
// and a load's rollout, in the current form, and checks that no line of
// the new recording is longer than record.MaxLine (but for a single line
// of text inside a blob), that the payloads repeated in the original are
// stored once, and that the new recording replays.
func TestRecordingStoresLargePayloadsOnce(t *testing.T) {
	t.Parallel()
	names := []string{"TestSkillCommand", "TestSkillCommand.app-server", "TestSessionLoadAfterRestart", "TestFastMode.app-server"}
	// Skills on the app-server, a load's rollout on exec.
	// The cases run one after another (each replays twice, the second
	// replay waiting for the first): the test holds one replay's place from
	// the start rather than queue its cases behind the corpus's, where
	// their second replays made a tail.
	for _, name := range quick(t, names, itself, "TestSkillCommand.app-server", "TestSessionLoadAfterRestart") {
		t.Run(name, func(t *testing.T) {
			again := filepath.Join(t.TempDir(), name+".ndjson")
			if d := os.Getenv("KEEP_RECORDING"); d != "" {
				again = filepath.Join(d, name+".ndjson")
			}
			o := opts
			o.AgentArgs = []string{"--record", again}
			res, err := replay.Run(context.Background(), filepath.Join(corpusDir, name+".ndjson"), o)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Match() {
				t.Fatalf("the replay being recorded does not match:\n%s", res.Report())
			}
			orig, err := os.ReadFile(filepath.Join(corpusDir, name+".ndjson"))
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(again)
			if err != nil {
				t.Fatal(err)
			}
			checkLineBound(t, data)
			if !bytes.Contains(data, []byte(`"kind":"blob"`)) {
				t.Errorf("no blob in the new recording")
			}
			// The catalog's first model is in the start entry and in every
			// model picker the agent sent (a session/new, load or resume
			// answer): stored once, it is written twice however many
			// sessions there were.
			entries, err := record.Read(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			desc, _ := json.Marshal(entries[0].Models[0].Description)
			if n := bytes.Count(data, desc); n > 2 {
				t.Errorf("the first model's description is written %d times, %d in the original", n, bytes.Count(orig, desc))
			}
			t.Logf("%s: %d → %d bytes, longest line %d → %d", name, len(orig), len(data), longestLine(orig), longestLine(data))
			if res2 := replayFile(t, again); !res2.Match() {
				t.Errorf("the new recording does not replay")
			} else if len(res2.Got) != len(res.Got) {
				t.Errorf("%d messages replayed from the new recording, %d from the original", len(res2.Got), len(res.Got))
			}
		})
	}
}

// checkLineBound fails for each line of a transcript longer than
// record.MaxLine, but a blob's single line of text (a text with no
// newline to cut it at).
func checkLineBound(t *testing.T, data []byte) {
	t.Helper()
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if len(line) <= record.MaxLine {
			continue
		}
		var b struct {
			Kind string  `json:"kind"`
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(line, &b); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if b.Kind != record.KindBlob || b.Text == nil {
			t.Errorf("line %d has %d bytes (bound %d): %.300s…", i+1, len(line), record.MaxLine, line)
			continue
		}
		text := strings.TrimSuffix(*b.Text, "\n")
		if strings.Contains(text, "\n") || strings.Contains(strings.TrimSuffix(text, `\n`), `\n`) {
			t.Errorf("line %d: a blob's text of %d bytes with a newline to cut it at", i+1, len(line))
		}
	}
}

func longestLine(data []byte) int {
	n := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		n = max(n, len(line))
	}
	return n
}

// TestCorpusInCurrentForm writes every corpus transcript (recorded in
// format 1, lines up to 68 KB) in the current form: no line over the
// bound, and every entry reads back as it was.
func TestCorpusInCurrentForm(t *testing.T) {
	t.Parallel()
	var before, after, longest int
	for _, path := range corpus(t) {
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := record.Read(bytes.NewReader(orig))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := record.Write(&buf, entries); err != nil {
			t.Fatal(err)
		}
		checkLineBound(t, buf.Bytes())
		again, err := record.Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("%s in the current form: %v", path, err)
		}
		var want, got []string
		for _, list := range []struct {
			entries []record.Entry
			out     *[]string
		}{{entries, &want}, {again, &got}} {
			for _, e := range list.entries {
				if e.Kind == record.KindBlob {
					continue
				}
				e.Format = 0
				b, err := record.Encode(&e)
				if err != nil {
					t.Fatal(err)
				}
				*list.out = append(*list.out, string(b))
			}
		}
		if strings.Join(got, "") != strings.Join(want, "") {
			t.Errorf("%s does not read back from the current form", path)
		}
		before += len(orig)
		after += buf.Len()
		longest = max(longest, longestLine(orig))
	}
	t.Logf("corpus: %d → %d bytes in the current form; longest line %d", before, after, longest)
}
