package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/codexacp/codexacp/record"
)

// The replay corpus (e2e/testdata/transcripts, recorded from real codex
// 0.169 runs through the e2e suite) is golden-tested here too: each
// transcript's codex output, run by run through one Translator as the agent
// does for a session, against testdata/golden/corpus/<transcript>.json.
// A transcript of the app-server backend has no runs of codex exec: its
// app-server notifications go through AppServer and a Translator as in
// TestAppServerGolden (one golden of turns for the whole transcript).
// Regenerate with go test ./events -run TestCorpusGolden -update.
const (
	corpusTranscripts = "../e2e/testdata/transcripts"
	corpusGoldenDir   = "testdata/golden/corpus"
)

type corpusGolden struct {
	Runs []corpusRun `json:"runs"`
}

type corpusRun struct {
	Run     int           `json:"run"`
	Steps   []goldenStep  `json:"steps"`
	Outcome goldenOutcome `json:"outcome"`
}

func TestCorpusGolden(t *testing.T) {
	transcripts, err := filepath.Glob(filepath.Join(corpusTranscripts, "*.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	if len(transcripts) == 0 {
		t.Fatalf("no transcripts in %s", corpusTranscripts)
	}
	checkGoldenDir(t, corpusGoldenDir, transcripts, translateTranscript)
}

// TestCorpusGoldenReadsBlobs translates a corpus transcript stored in the
// current form (its large values as blobs, record.Write) as it translates
// the form it was recorded in.
func TestCorpusGoldenReadsBlobs(t *testing.T) {
	for _, name := range []string{"TestSkillCommand.ndjson", "TestSkillCommand.app-server.ndjson"} {
		path := filepath.Join(corpusTranscripts, name)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := record.Read(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := record.Write(&buf, entries); err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(buf.Bytes(), []byte(`"kind":"blob"`)) {
			t.Fatalf("%s has no blob in the current form", name)
		}
		blobbed := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(blobbed, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if want, got := translateTranscript(t, path), translateTranscript(t, blobbed); !bytes.Equal(got, want) {
			t.Errorf("%s translates differently with blobs:\n%s", name, got)
		}
	}
}

// transcriptEntry is the part of a transcript line this test reads (the
// format is package record's, whose Expand puts a transcript's blobs back
// first; decoding the lines here keeps events free of record's types).
type transcriptEntry struct {
	Kind          string          `json:"kind"`
	ContextWindow int             `json:"context_window"`
	Run           int             `json:"run"`
	Line          json.RawMessage `json:"line"`
	Text          string          `json:"text"`
	Dir           string          `json:"dir"`
	Msg           struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"msg"`
}

// translateTranscript feeds each codex run of a transcript through one
// Translator, a turn per run, and returns the indented golden JSON.
func translateTranscript(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A transcript stores its large values once (blobs): put them back.
	if data, err = record.Expand(data); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var tr *Translator
	var g corpusGolden
	var cur *corpusRun
	appServer, window := false, 0
	var notes []notification
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		raw, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
			var e transcriptEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			switch e.Kind {
			case "start":
				tr = NewTranslator(Options{OwnMCPServer: "acp", ContextWindow: e.ContextWindow})
				window = e.ContextWindow
			case "appserver":
				appServer = true
				if e.Dir == "in" && e.Msg.Method != "" && len(e.Msg.ID) == 0 {
					notes = append(notes, notification{e.Msg.Method, e.Msg.Params})
				}
			case "codex_start":
				tr.BeginTurn()
				g.Runs = append(g.Runs, corpusRun{Run: e.Run})
				cur = &g.Runs[len(g.Runs)-1]
			case "codex_line":
				line := []byte(e.Line)
				if len(line) == 0 {
					line = []byte(e.Text)
				}
				ev, err := Parse(line)
				if err != nil {
					cur.Steps = append(cur.Steps, goldenStep{Event: "unparsable: " + err.Error(), Updates: []any{}})
					continue
				}
				cur.Steps = append(cur.Steps, goldenStep{Event: summary(ev), Updates: marshalUpdates(t, tr.Translate(ev))})
			case "codex_exit":
				out := tr.EndTurn()
				cur.Outcome = outcomeGolden(t, out)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if appServer {
		return translateNotifications(t, notes, window)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
