//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// titleMarker is a phrase of the system prompt @agentclientprotocol/codex-acp
// sends (on an ephemeral thread, after a session's first turn) to have the
// model name the conversation (its src/TitleGenerator.ts).
const titleMarker = "generate a very short title for a conversation"

// Title is the fixed answer to a title request.
const Title = "Side by side benchmark"

// model is a scripted model for one run: the mockapi server with the scripted
// turns, and in front of it a loopback proxy that answers title requests from
// a second mockapi server, so that they never spend a scripted response.
type model struct {
	main   *mockapi.Server
	titles *mockapi.Server
	ln     net.Listener
	srv    *http.Server

	titleCount    atomic.Int64
	titleInFlight atomic.Int64
	mu            sync.Mutex
	unscripted    []string    // first lines of requests that found no scripted answer
	arrivals      []time.Time // when each non-title model request arrived
}

func startModel() (*model, error) {
	m := &model{}
	var err error
	if m.main, err = mockapi.Start(); err != nil {
		return nil, err
	}
	if m.titles, err = mockapi.Start(); err != nil {
		m.main.Close()
		return nil, err
	}
	if m.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		m.main.Close()
		m.titles.Close()
		return nil, err
	}
	mainURL, _ := url.Parse(strings.TrimSuffix(m.main.URL(), "/v1"))
	titleURL, _ := url.Parse(strings.TrimSuffix(m.titles.URL(), "/v1"))
	toMain := httputil.NewSingleHostReverseProxy(mainURL)
	toMain.FlushInterval = -1
	toTitles := httputil.NewSingleHostReverseProxy(titleURL)
	toTitles.FlushInterval = -1
	m.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.Method == http.MethodPost && isTitleRequest(body) {
			m.titleCount.Add(1)
			m.titleInFlight.Add(1)
			defer m.titleInFlight.Add(-1)
			m.titles.Enqueue(mockapi.Reply(mockapi.Message(`{"title":"` + Title + `"}`)))
			toTitles.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodPost {
			m.mu.Lock()
			m.arrivals = append(m.arrivals, time.Now())
			if m.main.Pending() == 0 {
				m.unscripted = append(m.unscripted, firstUserText(body))
			}
			m.mu.Unlock()
		}
		toMain.ServeHTTP(w, r)
	})}
	go m.srv.Serve(m.ln) //nolint:errcheck // ErrServerClosed after Close
	return m, nil
}

// URL is the base URL (ending in /v1) codex's provider points at.
func (m *model) URL() string { return "http://" + m.ln.Addr().String() + "/v1" }

func (m *model) Close() {
	m.srv.Close()
	m.main.Close()
	m.titles.Close()
}

// waitTitlesIdle waits (bounded) until no title request is being answered.
func (m *model) waitTitlesIdle(d time.Duration) {
	deadline := time.Now().Add(d)
	for m.titleInFlight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// requestsSince returns the offsets from start of the model requests that
// arrived after it.
func (m *model) requestsSince(start time.Time) []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []time.Duration
	for _, t := range m.arrivals {
		if t.After(start) {
			out = append(out, t.Sub(start))
		}
	}
	return out
}

func (m *model) Unscripted() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.unscripted...)
}

// isTitleRequest recognises the title request by its prompt text.
func isTitleRequest(body []byte) bool {
	return bytes.Contains(body, []byte(titleMarker))
}

// firstUserText names a request in error reports.
func firstUserText(body []byte) string {
	var r mockapi.Request
	if json.Unmarshal(body, &r.Body) != nil {
		return fmt.Sprintf("%d bytes, not JSON", len(body))
	}
	texts := r.Texts("user")
	if len(texts) == 0 {
		return "(no user text)"
	}
	s := texts[len(texts)-1]
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// toolForm says how a run's codex offers a tool: as a JSON function, as a
// freeform custom tool, or not at all.
type toolForm string

const (
	formNone     toolForm = ""
	formFunction toolForm = "function"
	formCustom   toolForm = "custom"
)

// offeredTools maps each tool name in a request's tool list to its form.
func offeredTools(r mockapi.Request) map[string]toolForm {
	out := map[string]toolForm{}
	list, _ := r.Body["tools"].([]any)
	for _, v := range list {
		t, _ := v.(map[string]any)
		name, _ := t["name"].(string)
		typ, _ := t["type"].(string)
		switch typ {
		case "function":
			out[name] = formFunction
		case "custom":
			out[name] = formCustom
		case "namespace":
			// Deferred tools (MCP servers) are offered as namespaces.
			out[name] = formFunction
		default:
			if name != "" {
				out[name] = toolForm(typ)
			}
		}
	}
	return out
}

// shellCall is the model running `echo x` with whichever shell tool codex
// offers.
func shellCall(tools map[string]toolForm, callID string) (mockapi.Item, error) {
	switch {
	case tools["exec_command"] == formFunction:
		return mockapi.ExecCommand(callID, "echo x"), nil
	case tools["shell_command"] == formFunction:
		return mockapi.FunctionCall(callID, "shell_command", `{"command":"echo x"}`), nil
	case tools["shell"] == formFunction:
		return mockapi.FunctionCall(callID, "shell", `{"command":["bash","-lc","echo x"]}`), nil
	}
	return nil, fmt.Errorf("no shell tool offered (tools: %v)", tools)
}

// applyPatchCall is the model editing path with codex's own apply_patch tool.
func applyPatchCall(tools map[string]toolForm, callID, path, oldLine, newLine string) (mockapi.Item, error) {
	patch := "*** Begin Patch\n*** Update File: " + path + "\n@@\n-" + oldLine + "\n+" + newLine + "\n*** End Patch\n"
	switch tools["apply_patch"] {
	case formCustom:
		return mockapi.Item{
			"type":    "custom_tool_call",
			"id":      "ctc_" + callID,
			"call_id": callID,
			"name":    "apply_patch",
			"input":   patch,
			"status":  "completed",
		}, nil
	case formFunction:
		args, _ := json.Marshal(map[string]string{"input": patch})
		return mockapi.FunctionCall(callID, "apply_patch", string(args)), nil
	}
	return nil, fmt.Errorf("apply_patch is not offered")
}

// acpEditCall is the model editing path with codexacp's edit_text_file tool.
func acpEditCall(callID, path, oldLine, newLine string) mockapi.Item {
	args, _ := json.Marshal(map[string]string{"path": path, "old_string": oldLine, "new_string": newLine})
	return mockapi.NamespacedCall(callID, "mcp__acp", "edit_text_file", string(args))
}
