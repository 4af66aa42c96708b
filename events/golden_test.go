package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/internal/acpschema"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current translation")

// Golden inputs: real `codex exec --json` output of codex 0.169 (the
// project's captures, kept byte for byte in testdata/codex) and hand-written
// lines for cases no capture covers (our own MCP server, unknown types, edge
// cases).
const (
	capturedDir  = "testdata/codex"
	syntheticDir = "testdata/synthetic"
	goldenDir    = "testdata/golden"
)

// goldenContextWindow is an arbitrary window size for the goldens.
const goldenContextWindow = 272000

// golden is what one input file translates to, stored as indented JSON.
type golden struct {
	Steps   []goldenStep  `json:"steps"`
	Outcome goldenOutcome `json:"outcome"`
}

type goldenStep struct {
	Event   string `json:"event"` // summary of the input line
	Updates []any  `json:"updates"`
}

type goldenOutcome struct {
	ThreadID      string `json:"threadId"`
	Completed     bool   `json:"completed"`
	Interrupted   bool   `json:"interrupted,omitempty"`
	FailedMessage string `json:"failedMessage"`
	// Failure is how the failure is explained (Outcome.Failure, without
	// limits or /compact); nil unless the turn failed.
	Failure     *goldenFailure `json:"failure,omitempty"`
	Usage       Usage          `json:"usage"`
	ThreadUsage Usage          `json:"threadUsage"`
	ContextUsed int            `json:"contextUsed"`
	Updates     []any          `json:"updates"`
}

// goldenFailure is a failed turn's Outcome.Failure in goldens.
type goldenFailure struct {
	Info         json.RawMessage   `json:"codexErrorInfo,omitempty"`
	Shown        bool              `json:"shown,omitempty"`
	Kind         FailureKind       `json:"kind"`
	StopReason   acpsdk.StopReason `json:"stopReason,omitempty"`
	AuthRequired bool              `json:"authRequired,omitempty"`
	Message      string            `json:"message"`
}

func TestGolden(t *testing.T) {
	inputs := goldenInputs(t)
	if len(inputs) == 0 {
		t.Fatal("no golden inputs found")
	}
	checkGoldenDir(t, goldenDir, inputs, translateFile)
}

// checkGoldenDir translates each input and compares the result with
// dir/<input base name>.json (-update rewrites it). A golden in dir without
// an input is stale: an error, removed with -update.
func checkGoldenDir(t *testing.T, dir string, inputs []string, translate func(*testing.T, string) []byte) {
	t.Helper()
	want := map[string]bool{}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), filepath.Ext(in)) + ".json"
		want[name] = true
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			checkGolden(t, filepath.Join(dir, name), translate(t, in), in)
		})
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		switch {
		case want[filepath.Base(f)]:
		case *update:
			os.Remove(f)
		default:
			t.Errorf("%s has no input file (-update removes it)", f)
		}
	}
}

// checkGolden compares got, translated from input, with the golden file at
// path; -update rewrites the file instead.
func checkGolden(t *testing.T, path string, got []byte, input string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./events -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("translation of %s differs from %s (review, then -update):\n%s", input, path, lineDiff(string(want), string(got)))
	}
}

func goldenInputs(t *testing.T) []string {
	t.Helper()
	var all []string
	for _, dir := range []string{capturedDir, syntheticDir} {
		files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, files...)
	}
	return all
}

// translateFile feeds one JSONL file through a fresh Translator as one turn
// and returns the indented golden JSON. Every update is checked against the
// ACP schema on the way.
func translateFile(t *testing.T, path string) []byte {
	t.Helper()
	tr := NewTranslator(Options{OwnMCPServer: "acp", ContextWindow: goldenContextWindow})
	tr.BeginTurn()
	var g golden
	for i, line := range readLines(t, path) {
		ev, err := Parse(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		g.Steps = append(g.Steps, goldenStep{Event: summary(ev), Updates: marshalUpdates(t, tr.Translate(ev))})
	}
	out := tr.EndTurn()
	g.Outcome = outcomeGolden(t, out)
	// Without HTML escaping, so that commands read as they are ("&&").
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func summary(ev Event) string {
	s := ev.Type
	if ev.Item != nil {
		s += " " + ev.Item.Type + " " + ev.Item.ID
	}
	if !ev.Known() {
		s += " (unknown)"
	}
	return s
}

// marshalUpdates marshals updates as the SDK sends them, checks each one
// and returns them decoded, for the golden file.
// outcomeGolden is how an Outcome is stored in goldens.
func outcomeGolden(t *testing.T, out Outcome) goldenOutcome {
	var failure *goldenFailure
	if out.FailedMessage != "" {
		f := out.Failure(FailureContext{Now: time.Unix(0, 0).UTC()})
		failure = &goldenFailure{Info: out.FailedInfo, Shown: out.FailedShown, Kind: f.Kind,
			StopReason: f.StopReason, AuthRequired: f.AuthRequired, Message: f.Message}
	}
	return goldenOutcome{
		Failure:       failure,
		ThreadID:      out.ThreadID,
		Completed:     out.Completed,
		Interrupted:   out.Interrupted,
		FailedMessage: out.FailedMessage,
		Usage:         out.Usage,
		ThreadUsage:   out.ThreadUsage,
		ContextUsed:   out.ContextUsed,
		Updates:       marshalUpdates(t, out.Updates),
	}
}

func marshalUpdates(t *testing.T, us []acpsdk.SessionUpdate) []any {
	t.Helper()
	out := []any{}
	for _, u := range us {
		var v any
		if err := json.Unmarshal(checkUpdate(t, u), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// checkUpdate marshals u and checks it: one variant set, exactly one
// sessionUpdate discriminator, valid against the ACP schema, and decoding
// back to the same variant.
func checkUpdate(t *testing.T, u acpsdk.SessionUpdate) []byte {
	t.Helper()
	if n := variants(u); n != 1 {
		t.Fatalf("update has %d variants set: %+v", n, u)
	}
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatalf("marshal update: %v", err)
	}
	if err := acpschema.ValidateSessionUpdate(b); err != nil {
		t.Errorf("%s: %v", b, err)
	}
	var back acpsdk.SessionUpdate
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	if variants(back) != 1 {
		t.Errorf("%s decodes to %d variants", b, variants(back))
	}
	return b
}

func variants(u acpsdk.SessionUpdate) int {
	n := 0
	for _, set := range []bool{
		u.UserMessageChunk != nil, u.AgentMessageChunk != nil, u.AgentThoughtChunk != nil,
		u.ToolCall != nil, u.ToolCallUpdate != nil, u.Plan != nil, u.AvailableCommandsUpdate != nil,
		u.CurrentModeUpdate != nil, u.ConfigOptionUpdate != nil, u.SessionInfoUpdate != nil, u.UsageUpdate != nil,
	} {
		if set {
			n++
		}
	}
	return n
}

// readLines reads a JSONL file without a line length limit.
func readLines(t testing.TB, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			lines = append(lines, line)
		}
		if err == io.EOF {
			return lines
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// lineDiff shows the first differing lines of two texts.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n- " + wl + "\n+ " + gl
		}
	}
	return "(no line differs)"
}
