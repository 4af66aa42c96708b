package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
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
// the form it was recorded in: TestHelloTurn with the model's answer made
// long enough (3 KB) to be a blob.
func TestCorpusGoldenReadsBlobs(t *testing.T) {
	f, err := os.Open(filepath.Join(corpusTranscripts, "TestHelloTurn.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := record.Read(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a long answer of the model, line after line\\n", 70)
	var plain bytes.Buffer
	for i := range entries {
		e := &entries[i]
		if e.Kind == record.KindBlob {
			continue // Read put its value where it is referred to
		}
		if e.Kind == record.KindCodexLine {
			e.Line = bytes.Replace(e.Line, []byte(`"agent_message","text":"`), []byte(`"agent_message","text":"`+long), 1)
		}
		b, err := record.Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		plain.Write(b)
	}
	var blobbed bytes.Buffer
	if err := record.Write(&blobbed, entries); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(blobbed.Bytes(), []byte(`"kind":"blob"`)) {
		t.Fatalf("no blob in the current form")
	}
	dir := t.TempDir()
	paths := [2]string{filepath.Join(dir, "plain.ndjson"), filepath.Join(dir, "blobbed.ndjson")}
	for i, data := range [][]byte{plain.Bytes(), blobbed.Bytes()} {
		if err := os.WriteFile(paths[i], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, got := translateTranscript(t, paths[0]), translateTranscript(t, paths[1])
	if !bytes.Contains(want, []byte("line after line")) {
		t.Fatalf("the long answer is not in the translation:\n%s", want)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the transcript translates differently with blobs:\n%s", got)
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
	// As the exec backend does, the rollout records read when a codex line
	// came (recorded after the line) go through a RefusalScanner before
	// the line, and those read after codex exited before the turn ends.
	var scanner RefusalScanner
	var pendingLine []byte // a codex line not translated yet
	ending := false        // the run exited; the turn is not ended yet
	flush := func() {
		if pendingLine != nil {
			line := pendingLine
			pendingLine = nil
			if ev, err := Parse(line); err != nil {
				cur.Steps = append(cur.Steps, goldenStep{Event: "unparsable: " + err.Error(), Updates: []any{}})
			} else {
				cur.Steps = append(cur.Steps, goldenStep{Event: summary(ev), Updates: marshalUpdates(t, tr.Translate(ev))})
			}
		}
		if ending {
			ending = false
			cur.Outcome = outcomeGolden(t, tr.EndTurn())
		}
	}
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		raw, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
			var e transcriptEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if e.Kind == "rollout" {
				if ev, ok := scanner.Record(e.Line); ok {
					cur.Steps = append(cur.Steps, goldenStep{Event: summary(ev), Updates: marshalUpdates(t, tr.Translate(ev))})
				}
			} else {
				flush()
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
				scanner = RefusalScanner{}
				g.Runs = append(g.Runs, corpusRun{Run: e.Run})
				cur = &g.Runs[len(g.Runs)-1]
			case "codex_line":
				pendingLine = []byte(e.Line)
				if len(pendingLine) == 0 {
					pendingLine = []byte(e.Text)
				}
			case "codex_exit":
				ending = true
			}
		}
		if errors.Is(err, io.EOF) {
			flush()
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
