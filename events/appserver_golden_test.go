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
)

// App-server goldens: transcripts of `codex app-server` 0.169 (the
// project's captures, kept byte for byte in testdata/appserver) and
// hand-written ones for what no capture covers
// (testdata/appserver-synthetic), in the captures' transcript format: one
// JSON object per line, {"t": ms, "dir": "c2s"|"s2c", "msg": <JSON-RPC
// message>}. Every server notification goes through one AppServer and one
// Translator, a turn per turn/started … turn/completed, against
// testdata/golden-appserver/<name>.json (-update rewrites them).
const (
	appServerCapturedDir  = "testdata/appserver"
	appServerSyntheticDir = "testdata/appserver-synthetic"
	appServerGoldenDir    = "testdata/golden-appserver"
)

type appServerGolden struct {
	Turns []appServerTurn `json:"turns"`
}

type appServerTurn struct {
	Steps   []appServerStep `json:"steps"`
	Outcome *goldenOutcome  `json:"outcome"` // nil: the transcript ends inside the turn
}

type appServerStep struct {
	Notification string  `json:"notification"` // method, and the item's type and id
	Error        string  `json:"error,omitempty"`
	Events       []Event `json:"events"`
	Updates      []any   `json:"updates"`
}

// transcriptMessage is one line of an app-server transcript.
type transcriptMessage struct {
	Dir string `json:"dir"`
	Msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"msg"`
}

// notification is a server notification of a transcript.
type notification struct {
	Method string
	Params json.RawMessage
}

// readNotifications returns the server notifications of a transcript, in
// order: messages from the server with a method and no id (requests and
// responses are the caller's business, not the converter's).
func readNotifications(t testing.TB, path string) []notification {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []notification
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var m transcriptMessage
			if jerr := json.Unmarshal(line, &m); jerr != nil {
				t.Fatalf("%s:%d: %v", path, n, jerr)
			}
			if m.Dir == "s2c" && m.Msg.Method != "" && len(m.Msg.ID) == 0 {
				out = append(out, notification{m.Msg.Method, m.Msg.Params})
			}
		}
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestAppServerGolden(t *testing.T) {
	var inputs []string
	for _, dir := range []string{appServerCapturedDir, appServerSyntheticDir} {
		files, err := filepath.Glob(filepath.Join(dir, "*.ndjson"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no transcripts in %s", dir)
		}
		inputs = append(inputs, files...)
	}
	checkGoldenDir(t, appServerGoldenDir, inputs, translateAppServer)
}

// translateAppServer feeds a transcript's notifications through one
// AppServer and one Translator and returns the indented golden JSON. A turn
// begins with the transcript (thread/started comes before the first
// turn/started) or with the first notification after a turn/completed.
func translateAppServer(t *testing.T, path string) []byte {
	t.Helper()
	return translateNotifications(t, readNotifications(t, path), goldenContextWindow)
}

// goldenChild is a subagent's thread in a golden transcript: its own
// converter, and the parent's tool call that named it.
type goldenChild struct {
	conv   *AppServer
	callID string
}

// translateNotifications is translateAppServer's work on the notifications
// of a transcript (also of a replay corpus transcript, TestCorpusGolden).
// The notifications of a thread an item named as a subagent's, once named,
// go through a converter of their own and ChildEvent, as the agent routes
// them to the parent's turn.
func translateNotifications(t *testing.T, notes []notification, contextWindow int) []byte {
	t.Helper()
	conv := NewAppServer()
	tr := NewTranslator(Options{OwnMCPServer: "acp", ContextWindow: contextWindow})
	children := map[string]*goldenChild{}
	var g appServerGolden
	var cur *appServerTurn
	for _, n := range notes {
		if cur == nil {
			tr.BeginTurn()
			g.Turns = append(g.Turns, appServerTurn{})
			cur = &g.Turns[len(g.Turns)-1]
		}
		step := appServerStep{Notification: notificationSummary(n), Events: []Event{}, Updates: []any{}}
		child := children[threadOf(n.Params)]
		var (
			evs []Event
			err error
		)
		if child != nil {
			step.Notification = "subagent " + step.Notification
			evs, err = child.conv.Convert(n.Method, n.Params)
			shown := []Event{}
			for _, ev := range evs {
				if ev, ok := ChildEvent(ev, child.callID); ok {
					shown = append(shown, ev)
				}
			}
			evs = shown
		} else {
			evs, err = conv.Convert(n.Method, n.Params)
		}
		if err != nil {
			step.Error = err.Error()
		}
		ended := false
		for _, ev := range evs {
			step.Events = append(step.Events, ev)
			step.Updates = append(step.Updates, marshalUpdates(t, tr.Translate(ev))...)
			switch ev.Type {
			case TypeTurnCompleted, TypeTurnFailed, TypeTurnInterrupted:
				ended = true
			}
			if ev.Item != nil && child == nil {
				for _, th := range ev.Item.ChildThreads() {
					if children[th] == nil {
						children[th] = &goldenChild{conv: NewAppServer(), callID: ev.Item.ID}
					}
				}
			}
		}
		cur.Steps = append(cur.Steps, step)
		if ended {
			out := outcomeGolden(t, tr.EndTurn())
			cur.Outcome = &out
			cur = nil
		}
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

// threadOf is the thread a notification names (params.threadId).
func threadOf(params json.RawMessage) string {
	var p struct {
		ThreadID string `json:"threadId"`
	}
	_ = json.Unmarshal(params, &p)
	return p.ThreadID
}

// notificationSummary is the method, with the item's type and id for item
// notifications.
func notificationSummary(n notification) string {
	var p struct {
		Item *struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		} `json:"item"`
		ItemID string `json:"itemId"`
	}
	_ = json.Unmarshal(n.Params, &p)
	switch {
	case p.Item != nil:
		return n.Method + " " + p.Item.Type + " " + p.Item.ID
	case p.ItemID != "":
		return n.Method + " " + p.ItemID
	}
	return n.Method
}
