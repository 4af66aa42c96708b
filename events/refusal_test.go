package events

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// Rollout records of exec turns (codex 0.169's shapes, the refused call's
// output as codex wrote it) → the refused commands' tool calls, golden.
const (
	refusalDir       = "testdata/refusal"
	refusalGoldenDir = "testdata/golden-refusal"
)

func TestRefusalGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join(refusalDir, "*.jsonl"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs in %s: %v", refusalDir, err)
	}
	checkGoldenDir(t, refusalGoldenDir, inputs, translateRollout)
}

// translateRollout feeds a rollout's records through a RefusalScanner and
// its events through a Translator, as the exec backend does during a turn.
func translateRollout(t *testing.T, path string) []byte {
	t.Helper()
	tr := NewTranslator(Options{OwnMCPServer: "acp"})
	tr.BeginTurn()
	var s RefusalScanner
	var g golden
	for _, line := range readLines(t, path) {
		if ev, ok := s.Record(line); ok {
			g.Steps = append(g.Steps, goldenStep{Event: summary(ev), Updates: marshalUpdates(t, tr.Translate(ev))})
		}
	}
	g.Outcome = outcomeGolden(t, tr.EndTurn())
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRefusalReason(t *testing.T) {
	for _, tc := range []struct {
		output string
		want   bool
	}{
		{"approval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never", true},
		{"  approval policy is Never; reject command — you cannot request additional permissions unless the approval policy is OnRequest\n", true},
		{"Process exited with code 1\nOutput:\ntouch: cannot touch '/x': Read-only file system", false},
		{"echo approval policy is Never; reject command", false}, // not codex's text: the command's output
		{"you cannot request additional permissions unless the approval policy is OnRequest", true},
		// A command that ran and printed codex's words (echo, grep of a log).
		{"Process exited with code 0\nOutput:\nyou cannot request additional permissions unless the approval policy is OnRequest\n", false},
		{"Chunk ID: 1\nOutput:\napproval policy is Never; reject command", false},
		{"", false},
	} {
		if _, got := RefusalReason(tc.output); got != tc.want {
			t.Errorf("RefusalReason(%q) = %v, want %v", tc.output, got, tc.want)
		}
	}
}

// The scanner keeps a bounded number of calls waiting for their output:
// a rollout of endless unanswered calls does not grow it.
func TestRefusalScannerBounded(t *testing.T) {
	var s RefusalScanner
	for i := range 10 * maxPendingShellCalls {
		line, _ := json.Marshal(map[string]any{"type": "response_item", "payload": map[string]any{
			"type": "function_call", "name": "exec_command", "arguments": `{"cmd":"true"}`, "call_id": strings.Repeat("c", 1+i%50) + string(rune('a'+i%26)) + strings.Repeat("x", i),
		}})
		if _, ok := s.Record(line); ok {
			t.Fatal("a call is not a refusal")
		}
	}
	if len(s.calls) > maxPendingShellCalls || len(s.order) > maxPendingShellCalls {
		t.Errorf("the scanner holds %d calls (%d ids), bound %d", len(s.calls), len(s.order), maxPendingShellCalls)
	}
}

// A shell command that ran and printed codex's refusal text is no refused
// call; Scan says which lines a recording keeps: shell calls and the
// outputs of refused ones.
func TestRefusalScanNeeded(t *testing.T) {
	rec := func(payload map[string]any) []byte {
		b, err := json.Marshal(map[string]any{"type": "response_item", "payload": payload})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	call := func(id, cmd string) []byte {
		args, _ := json.Marshal(map[string]string{"cmd": cmd})
		return rec(map[string]any{"type": "function_call", "name": "exec_command", "arguments": string(args), "call_id": id})
	}
	output := func(id, text string) []byte {
		return rec(map[string]any{"type": "function_call_output", "call_id": id, "output": text})
	}
	printed := "you cannot request additional permissions unless the approval policy is OnRequest"
	for _, tc := range []struct {
		name          string
		line          []byte
		refused, need bool
	}{
		{"a shell call", call("c1", "echo '"+printed+"'"), false, true},
		{"its output, codex's words printed", output("c1", "Process exited with code 0\nOutput:\n"+printed+"\n"), false, false},
		{"a refused call", call("c2", "touch /outside"), false, true},
		{"its refusal", output("c2", "approval policy is Never; reject command — you cannot ask for escalated permissions if the approval policy is Never"), true, true},
		{"another tool's call", rec(map[string]any{"type": "function_call", "name": "view_image", "arguments": "{}", "call_id": "c3"}), false, false},
		{"a message", []byte(`{"type":"response_item","payload":{"type":"message","role":"assistant"}}`), false, false},
	} {
		var s RefusalScanner
		if tc.name == "its output, codex's words printed" || tc.name == "its refusal" {
			// The scanner has seen the call.
			id := map[bool]string{true: "c2", false: "c1"}[tc.name == "its refusal"]
			s.Record(call(id, "x"))
		}
		_, refused, need := s.Scan(tc.line)
		if refused != tc.refused || need != tc.need {
			t.Errorf("%s: Scan = refused %v, needed %v; want %v, %v", tc.name, refused, need, tc.refused, tc.need)
		}
	}
}
