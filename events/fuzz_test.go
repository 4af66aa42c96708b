package events

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// Fuzzing: codex's output is input from another program, and a new codex
// version can print anything. Seeds: the recorded fixtures (added below)
// and testdata/fuzz/<Fuzz…>/. CI runs each target briefly:
//
//	go test ./events -run '^$' -fuzz '^FuzzTranslate$' -fuzztime 10s
//	go test ./events -run '^$' -fuzz '^FuzzHistory$' -fuzztime 10s
//	go test ./events -run '^$' -fuzz '^FuzzAppServer$' -fuzztime 10s

// FuzzTranslate feeds the lines of its input through Parse and one
// Translator, as the agent does with codex's stdout; an empty line ends the
// turn and starts the next. Whatever the lines, it must not panic, every
// update must be one valid ACP session update (checkUpdate), and tool call
// ids are announced once, then only updated.
func FuzzTranslate(f *testing.F) {
	addFixtures(f, "testdata/codex/*.jsonl", "testdata/synthetic/*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		// A small output cap, so that cutting output (UTF-8, markers) is
		// exercised too.
		tr := NewTranslator(Options{OwnMCPServer: "acp", ContextWindow: 200000, MaxOutputBytes: 64})
		calls := map[acpsdk.ToolCallId]bool{}
		tr.BeginTurn()
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				checkUpdates(t, calls, tr.EndTurn().Updates)
				tr.BeginTurn()
				continue
			}
			ev, err := Parse(line)
			if err != nil {
				continue
			}
			checkUpdates(t, calls, tr.Translate(ev))
		}
		out := tr.EndTurn()
		checkUpdates(t, calls, out.Updates)
		if _, err := json.Marshal(out.Usage.ACP()); err != nil {
			t.Errorf("usage does not marshal: %v", err)
		}
	})
}

// FuzzHistory reads its input as a rollout file: History must not panic,
// and what it returns must be valid ACP session updates.
func FuzzHistory(f *testing.F) {
	addFixtures(f, "testdata/rollout/*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		updates, err := History(bytes.NewReader(data), HistoryOptions{OwnMCPServer: "acp", MaxOutputBytes: 64})
		if err != nil {
			return
		}
		checkUpdates(t, map[acpsdk.ToolCallId]bool{}, updates)
	})
}

// addFixtures adds every file matching the patterns as a seed.
func addFixtures(f *testing.F, patterns ...string) {
	for _, pattern := range patterns {
		paths, err := filepath.Glob(pattern)
		if err != nil || len(paths) == 0 {
			f.Fatalf("no fixtures match %s (%v)", pattern, err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}

// checkUpdates checks each update (checkUpdate) and, in order, its tool
// call id; calls holds the ids announced so far in the session.
func checkUpdates(t *testing.T, calls map[acpsdk.ToolCallId]bool, updates []acpsdk.SessionUpdate) {
	t.Helper()
	for _, u := range updates {
		checkUpdate(t, u)
		switch {
		case u.ToolCall != nil:
			if calls[u.ToolCall.ToolCallId] {
				t.Fatalf("tool call %q announced twice", u.ToolCall.ToolCallId)
			}
			calls[u.ToolCall.ToolCallId] = true
		case u.ToolCallUpdate != nil:
			if !calls[u.ToolCallUpdate.ToolCallId] {
				t.Fatalf("update of tool call %q, never announced", u.ToolCallUpdate.ToolCallId)
			}
		}
	}
}

// FuzzAppServer feeds app-server notifications through one AppServer and
// one Translator, as the agent does with a thread's notifications. Each
// line of the input is one notification: the method, a space, the params
// (a line without a space is a method without params); a turn/completed
// ends the turn. Whatever the lines, Convert must not panic, its events
// must marshal, and the Translator's updates must be valid ACP session
// updates with consistent tool call ids (checkUpdates). Seeds: the
// app-server transcripts and testdata/fuzz/FuzzAppServer/.
func FuzzAppServer(f *testing.F) {
	for _, pattern := range []string{appServerCapturedDir + "/*.ndjson", appServerSyntheticDir + "/*.ndjson"} {
		paths, err := filepath.Glob(pattern)
		if err != nil || len(paths) == 0 {
			f.Fatalf("no transcripts match %s (%v)", pattern, err)
		}
		for _, p := range paths {
			// Only what AppServer converts: the rest (thread status, rate
			// limits, ...) would only make the seeds long and slow.
			var ns []notification
			for _, n := range readNotifications(f, p) {
				switch n.Method {
				case methodThreadStarted:
					n.Params = json.RawMessage(`{"thread":{"id":"th"}}`)
				case methodTurnStarted, methodTurnCompleted, methodTurnPlanUpdated, methodTokenUsageUpdated,
					methodItemStarted, methodItemCompleted, methodAgentMessageDelta, methodReasoningPartAdded,
					methodReasoningSumDelta, methodReasoningRawDelta, methodCommandOutputDelta,
					methodError, methodWarning, methodModelRerouted:
				default:
					continue
				}
				ns = append(ns, n)
			}
			f.Add(notificationScript(ns))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		conv := NewAppServer()
		tr := NewTranslator(Options{OwnMCPServer: "acp", ContextWindow: 200000, MaxOutputBytes: 64})
		calls := map[acpsdk.ToolCallId]bool{}
		tr.BeginTurn()
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			method, params, _ := bytes.Cut(line, []byte(" "))
			evs, err := conv.Convert(string(method), params)
			if err != nil {
				if evs != nil {
					t.Errorf("Convert returned events with an error: %v", err)
				}
				continue
			}
			for _, ev := range evs {
				if _, err := json.Marshal(ev); err != nil {
					t.Errorf("event %+v does not marshal: %v", ev, err)
				}
				checkUpdates(t, calls, tr.Translate(ev))
				switch ev.Type {
				case TypeTurnCompleted, TypeTurnFailed, TypeTurnInterrupted:
					checkUpdates(t, calls, tr.EndTurn().Updates)
					tr.BeginTurn()
				}
			}
		}
		out := tr.EndTurn()
		checkUpdates(t, calls, out.Updates)
		if _, err := json.Marshal(out.Usage.ACP()); err != nil {
			t.Errorf("usage does not marshal: %v", err)
		}
	})
}

// notificationScript renders notifications in FuzzAppServer's input
// format.
func notificationScript(ns []notification) []byte {
	var b bytes.Buffer
	for _, n := range ns {
		b.WriteString(n.Method)
		if len(n.Params) > 0 {
			b.WriteByte(' ')
			var c bytes.Buffer
			if json.Compact(&c, n.Params) == nil {
				b.Write(c.Bytes())
			} else {
				b.Write(n.Params)
			}
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}
