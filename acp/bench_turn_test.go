package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/appserver"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// notification is one app-server notification as recorded.
type notification struct {
	method string
	params json.RawMessage
}

// recordedTurns reads the notifications of each turn (turn/started to
// turn/completed) of an app-server transcript, and each turn's id.
func recordedTurns(tb testing.TB, path string) (turns [][]notification, ids []string) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Dir string `json:"dir"`
			Msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			} `json:"msg"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			tb.Fatal(err)
		}
		m := line.Msg
		if line.Dir != "s2c" || m.Method == "" || m.ID != nil {
			continue
		}
		if m.Method == "turn/started" {
			turns = append(turns, nil)
			ids = append(ids, turnIDOf(m.Params))
		}
		if len(turns) > 0 {
			turns[len(turns)-1] = append(turns[len(turns)-1], notification{m.Method, m.Params})
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return turns, ids
}

// playedBackend plays recorded app-server turns through the app-server
// backend's turn handler (parsing, conversion, translation, updates): a
// warm app-server turn without codex. The last recorded turn repeats.
type playedBackend struct {
	backend.Unsupported
	turns [][]notification
	ids   []string
	n     int
	ended time.Time // when the last turn's turn/completed was delivered
}

func (b *playedBackend) Name() string { return "played" }

func (b *playedBackend) Run(_ context.Context, t backend.Turn, out backend.Output) error {
	i := min(b.n, len(b.turns)-1)
	b.n++
	if t.ThreadID == "" {
		out.Event(events.Event{Type: events.TypeThreadStarted, ThreadID: loadThreadID})
	}
	h := appserver.NewTurnHandler(out, discardLogger())
	h.Started(b.ids[i])
	for _, n := range b.turns[i] {
		h.Notify(n.method, n.params)
	}
	<-h.Ended(b.ids[i])
	h.Close()
	b.ended = time.Now()
	return nil
}

// BenchmarkAppServerTurnOverhead times codexacp's own part of a warm text
// turn on the app-server backend: an ACP prompt through the agent to a
// backend that plays a recorded codex 0.169 turn (11 notifications, two
// text deltas) through the real notification path, and the answer back to
// the editor, all in one process. "tail-µs" is the median time from the
// delivery of turn/completed to the editor having the answer: what the
// agent adds after codex has finished.
func BenchmarkAppServerTurnOverhead(b *testing.B) {
	turns, ids := recordedTurns(b, filepath.Join("..", "events", "testdata", "appserver", "text-turns-with-deltas.ndjson"))
	for _, bc := range []struct {
		name   string
		stored bool
	}{{"stored", true}, {"no-state-dir", false}} {
		b.Run(bc.name, func(b *testing.B) {
			be := &playedBackend{turns: turns, ids: ids}
			opts := Options{Backend: be}
			if bc.stored {
				opts.StateDir = b.TempDir()
			}
			h := startAgentWith(b, opts, fakeeditor.Options{})
			if _, err := h.editor.Initialize(h.ctx); err != nil {
				b.Fatal(err)
			}
			ns, err := h.editor.Conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: b.TempDir(), McpServers: []acpsdk.McpServer{}})
			if err != nil {
				b.Fatal(err)
			}
			sid := ns.SessionId
			prompt := func() {
				if _, err := h.editor.Conn.Prompt(h.ctx, acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hi")}}); err != nil {
					b.Fatal(err)
				}
			}
			prompt() // the first turn: the session gets its thread
			var tails []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				prompt()
				tails = append(tails, time.Since(be.ended))
			}
			b.StopTimer()
			slices.Sort(tails)
			b.ReportMetric(float64(tails[len(tails)/2].Nanoseconds())/1000, "tail-µs")
		})
	}
}

// turnIDOf is the turn a recorded turn/started names.
func turnIDOf(params json.RawMessage) string {
	var p struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Turn.ID
}
