package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/backend/appserver"
	codexapp "github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/syncbuf"
	"github.com/codexacp/codexacp/record"
)

func TestACPMethodName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":3,"method":"_codexacp/elicitation/create","params":{"sessionId":"s"}}`,
			`{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"sessionId":"s"}}`},
		{`{"jsonrpc":"2.0","id":3,"method":"_codexacp/elicitation/create","params":{}}` + "\n",
			`{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{}}` + "\n"},
		// Not the top-level method: unchanged.
		{`{"jsonrpc":"2.0","method":"x","params":{"m":{"method":"_codexacp/elicitation/create"}}}`,
			`{"jsonrpc":"2.0","method":"x","params":{"m":{"method":"_codexacp/elicitation/create"}}}`},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"text":"\"method\":\"_codexacp/elicitation/create\""}}`,
			`{"jsonrpc":"2.0","method":"session/update","params":{"text":"\"method\":\"_codexacp/elicitation/create\""}}`},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
	} {
		if got := string(acpMethodName([]byte(tc.in))); got != tc.want {
			t.Errorf("acpMethodName(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// askingBackend's turn is codex asking the user (item/tool/requestUserInput,
// or method) through the app-server turn handler; it keeps codex's answers.
type askingBackend struct {
	backend.Unsupported
	method string // "": item/tool/requestUserInput
	params string
	// trace, when set, is told codex's request and the agent's answer as
	// the app-server client tells a recorder (codexapp.Options.Trace).
	trace func(sent bool, line []byte)

	mu      sync.Mutex
	answers []string
}

func (b *askingBackend) Name() string { return "asking" }

func (b *askingBackend) Run(ctx context.Context, _ backend.Turn, out backend.Output) error {
	method := cmp.Or(b.method, "item/tool/requestUserInput")
	if b.trace != nil {
		b.trace(false, []byte(`{"id":7,"method":"`+method+`","params":`+b.params+`}`))
	}
	res, err := appserver.NewTurnHandler(out, discardLogger()).Request(ctx, method, json.RawMessage(b.params))
	if err != nil {
		return err
	}
	if b.trace != nil {
		b.trace(true, []byte(`{"id":7,"result":`+jsonString(res)+`}`))
	}
	b.mu.Lock()
	b.answers = append(b.answers, jsonString(res))
	b.mu.Unlock()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return playEvents(out,
		`{"type":"thread.started","thread_id":"th"}`,
		`{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2}}`)
}

// answered is codex's answers, one per turn.
func (b *askingBackend) answered() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.answers)
}

func (b *askingBackend) answer() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.answers) != 1 {
		return ""
	}
	return b.answers[0]
}

// Codex's questions reach an editor that declares elicitation as one
// elicitation/create form of the session (valid against the unstable
// schema), and its answer reaches codex; an editor without elicitation gets
// permission questions for what has options.
func TestAskUserByElicitation(t *testing.T) {
	t.Parallel()
	const params = `{"threadId":"th","turnId":"t1","itemId":"call_ask","isBlocking":true,"questions":[` +
		`{"id":"lang","header":"Language","question":"Which language?","options":[{"label":"English","description":"Hello"},{"label":"French","description":"Bonjour"}]},` +
		`{"id":"name","header":"Name","question":"Whom to greet?"}]}`
	for _, tc := range []struct {
		name   string
		editor func(ctx context.Context, req acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error)
		want   string // codex's answer
		asks   string // the method the editor is asked with
	}{
		{"accepted", func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
			return fakeeditor.Accept(map[string]any{"lang": "French", "name": "Ada"}), nil
		}, `{"answers":{"lang":{"answers":["French"]},"name":{"answers":["Ada"]}}}`, "elicitation/create"},
		{"an answer not offered", func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
			return fakeeditor.Accept(map[string]any{"lang": "German", "name": "Ada"}), nil
		}, `{"answers":{"name":{"answers":["Ada"]}}}`, "elicitation/create"},
		{"declined", func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
			return fakeeditor.Decline(), nil
		}, `{"answers":{}}`, "elicitation/create"},
		{"cancelled", func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
			return fakeeditor.Dismiss(), nil
		}, `{"answers":{}}`, "elicitation/create"},
		{"editor error", func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
			return acpsdk.UnstableCreateElicitationResponse{}, errors.New("form broke")
		}, `{"answers":{}}`, "elicitation/create"},
		{"unreadable answer", nil, `{"answers":{}}`, "elicitation/create"},
		{"no elicitation", nil, `{"answers":{"lang":{"answers":["English"]}}}`, "session/request_permission"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be := &askingBackend{params: params}
			eopts := fakeeditor.Options{Elicitation: tc.editor, Permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
				return fakeeditor.Select("answer-0")
			}}
			if tc.name == "unreadable answer" {
				// Not a CreateElicitationResponse (an action ACP does not
				// have): the editor sends it raw, as no SDK would.
				eopts.ElicitationResult = func(json.RawMessage) json.RawMessage { return json.RawMessage(`{"action":"maybe"}`) }
			}
			h := startAgent(t, be, eopts)
			sid := h.newSession(t, t.TempDir())
			if r, err := h.prompt(sid, "greet"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
				t.Fatalf("prompt: %+v, %v", r, err)
			}
			if got := be.answer(); got != tc.want {
				t.Errorf("codex's answer = %s, want %s", got, tc.want)
			}
			req := sentRequest(t, h.editor, tc.asks)
			if tc.asks == methodCreateElicitation {
				var p struct {
					SessionID       string          `json:"sessionId"`
					Mode            string          `json:"mode"`
					RequestedSchema json.RawMessage `json:"requestedSchema"`
				}
				if err := json.Unmarshal(req, &p); err != nil || p.SessionID != string(sid) || p.Mode != "form" ||
					!strings.Contains(string(p.RequestedSchema), `"name":{"type":"string"`) {
					t.Errorf("elicitation/create params = %s", req)
				}
			}
			checkSent(t, h.editor)
		})
	}
}

// An editor that declares form elicitation but answers elicitation/create
// "method not found" gets the question as a permission question instead,
// and later questions go straight there.
func TestAskUserFormRefused(t *testing.T) {
	t.Parallel()
	be := &askingBackend{params: `{"itemId":"call_ask","questions":[{"id":"lang","header":"Language","question":"Which language?","options":[{"label":"English"},{"label":"French"}]}]}`}
	h := startAgent(t, be, fakeeditor.Options{
		Elicitation: func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
			return acpsdk.UnstableCreateElicitationResponse{}, acpsdk.NewMethodNotFound(methodCreateElicitation)
		},
		Permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
			return fakeeditor.Select("answer-1")
		},
	})
	sid := h.newSession(t, t.TempDir())
	for range 2 {
		if r, err := h.prompt(sid, "greet"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
			t.Fatalf("prompt: %+v, %v", r, err)
		}
	}
	be.mu.Lock()
	answers := strings.Join(be.answers, " ")
	be.mu.Unlock()
	if want := `{"answers":{"lang":{"answers":["French"]}}} {"answers":{"lang":{"answers":["French"]}}}`; answers != want {
		t.Errorf("codex's answers = %s, want %s", answers, want)
	}
	count := map[string]int{}
	for _, c := range h.editor.Calls() {
		count[c.Method]++
	}
	if count[methodCreateElicitation] != 1 || count["session/request_permission"] != 2 {
		t.Errorf("the editor was asked %v, want one elicitation/create and two permission questions", count)
	}
	checkSent(t, h.editor)
}

// A secret typed into the form is in no --record transcript: neither in
// the editor's answer nor in the agent's answer to codex, however short;
// the other answers are.
func TestAskUserSecretNotRecorded(t *testing.T) {
	t.Parallel()
	const params = `{"itemId":"call_ask","questions":[` +
		`{"id":"token","header":"Token","question":"Your token?","isSecret":true},` +
		`{"id":"pin","header":"PIN","question":"Your PIN?","isSecret":true,"isOther":true,"options":[{"label":"none"}]},` +
		`{"id":"name","header":"Name","question":"Whom to greet?"}]}`
	be := &askingBackend{params: params}
	transcript := recordedAnswer(t, be, map[string]any{"token_secret": "tok-0123456789abcdef", "pin_other_secret": "4321", "name": "Ada Lovelace"},
		`{"answers":{"name":{"answers":["Ada Lovelace"]},"pin":{"answers":["4321"]},"token":{"answers":["tok-0123456789abcdef"]}}}`)
	checkSecretsLeftOut(t, transcript, "Ada Lovelace", "tok-0123456789abcdef", "4321")
}

// recordedAnswer runs one turn of be, whose editor accepts its
// elicitation with content, under a --record recorder that also taps be's
// app-server conversation; codex's answer must be want. It returns the
// transcript.
func recordedAnswer(t *testing.T, be *askingBackend, content map[string]any, want string) string {
	t.Helper()
	var buf syncbuf.Buffer
	rec := record.New(&buf)
	rec.SetBackend(record.BackendAppServer)
	rec.Start("codexacp test", 0)
	be.trace = rec.AppServerTrace(codexapp.Options{Env: []string{}})
	be.trace(true, []byte(`{"id":1,"method":"initialize","params":{}}`)) // the app-server run the turn belongs to
	h := startAgentTapped(t, Options{Backend: be, ContextWindow: 272000}, fakeeditor.Options{
		Elicitation: func(context.Context, acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
			return fakeeditor.Accept(content), nil
		},
	}, rec)
	sid := h.newSession(t, t.TempDir())
	if r, err := h.prompt(sid, "greet"); err != nil || r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", r, err)
	}
	if got := be.answer(); got != want {
		t.Fatalf("codex's answer = %s, want %s", got, want)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// checkSecretsLeftOut checks that the transcript holds none of the secrets
// and the answer that is no secret on both sides (the editor's answer,
// codex's).
func checkSecretsLeftOut(t *testing.T, transcript, plain string, secrets ...string) {
	t.Helper()
	for _, secret := range secrets {
		if strings.Contains(transcript, secret) {
			t.Errorf("the transcript holds the secret %q:\n%s", secret, transcript)
		}
	}
	if n := strings.Count(transcript, plain); n != 2 {
		t.Errorf("the transcript holds %q %d times, want 2 (the editor's answer, codex's):\n%s", plain, n, transcript)
	}
}

// A session/cancel while the form is open withdraws it ($/cancel_request:
// the editor's handler sees its request end), codex is answered with no
// answers, and the prompt ends cancelled.
func TestAskUserCancelledWhileAsked(t *testing.T) {
	t.Parallel()
	be := &askingBackend{params: `{"itemId":"call_ask","questions":[{"id":"name","header":"Name","question":"Whom?"}]}`}
	cancelWhileAsked(t, be, fakeeditor.Dismiss())
	if got := be.answer(); got != `{"answers":{}}` {
		t.Errorf("codex's answer = %s", got)
	}
}

// cancelWhileAsked prompts an agent serving be, whose editor holds its
// elicitation open until the agent withdraws it (then answers late with
// late), cancels the prompt once the editor is asked, and checks that the
// prompt ends cancelled and the question was withdrawn ($/cancel_request).
func cancelWhileAsked(t *testing.T, be *askingBackend, late acpsdk.UnstableCreateElicitationResponse) {
	t.Helper()
	asked := make(chan struct{})
	withdrawn := make(chan struct{})
	h := startAgent(t, be, fakeeditor.Options{Elicitation: func(ctx context.Context, _ acpsdk.UnstableCreateElicitationRequest) (acpsdk.UnstableCreateElicitationResponse, error) {
		close(asked)
		<-ctx.Done()
		close(withdrawn)
		return late, nil
	}})
	sid := h.newSession(t, t.TempDir())
	done := make(chan acpsdk.PromptResponse, 1)
	go func() {
		r, _ := h.prompt(sid, "greet")
		done <- r
	}()
	select {
	case <-asked:
	case r := <-done:
		t.Fatalf("the prompt ended (%q) without asking the editor", r.StopReason)
	}
	if err := h.editor.Conn.Cancel(h.ctx, acpsdk.CancelNotification{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.StopReason != acpsdk.StopReasonCancelled {
		t.Errorf("stopReason = %q, want cancelled", r.StopReason)
	}
	<-withdrawn
	sentRequest(t, h.editor, "$/cancel_request")
	checkSent(t, h.editor)
}

// sentRequest returns the params of the first message of the agent with
// the given method.
func sentRequest(t *testing.T, ed *fakeeditor.Editor, method string) json.RawMessage {
	t.Helper()
	for _, raw := range ed.Raw() {
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(raw, &m) == nil && m.Method == method {
			return m.Params
		}
	}
	t.Fatalf("the agent sent no %s", method)
	return nil
}

// checkSent validates every message the agent sent against the ACP schema;
// none goes out under our extension method name.
func checkSent(t *testing.T, ed *fakeeditor.Editor) {
	t.Helper()
	checkSchema(t, ed.Raw())
	for _, raw := range ed.Raw() {
		if strings.Contains(string(raw), extCreateElicitation) {
			t.Errorf("sent under the extension name: %s", raw)
		}
	}
}
