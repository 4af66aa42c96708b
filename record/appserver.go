package record

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"

	"github.com/codexacp/codexacp/codex/appserver"
	"github.com/codexacp/codexacp/codex/appserver/protocol"
	"github.com/codexacp/codexacp/internal/secrets"
)

// AppServerTrace returns a appserver.Options.Trace that records the
// conversation with the codex app-server processes started with opts, one
// appserver entry per line, in order: dir out for what the agent writes to
// the process's stdin, in for what it reads from its stdout, and eof
// entries for the ends of both streams. Each process is a run: an
// appserver_start entry (arguments with secrets redacted, environment
// names) is written when the agent sends its initialize request, and the
// run ends with its stdout. File tool calls made while a process runs
// belong to its run.
//
// What the agent sends is redacted as ACP messages are, and then some: the
// values of secret-looking keys (thread/start's MCP bearer token among
// them, in mcp_servers.acp.http_headers.Authorization) and every MCP server
// header value become [REDACTED], and those values are replaced wherever
// else they would appear. What codex sends goes through the replacement of
// known secrets and secret patterns, as codex exec's output does. The
// agent's answers to codex's secret questions (item/tool/requestUserInput,
// isSecret) are blanked whatever their length, and replaced wherever else
// they appear.
func (r *Recorder) AppServerTrace(opts appserver.Options) func(sent bool, line []byte) {
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	r.AddSecretsFromEnv(env)
	args := []string{"app-server"}
	r.mu.Lock()
	for _, kv := range r.redactArgsLocked(opts.Config) {
		args = append(args, "-c", kv)
	}
	r.mu.Unlock()
	t := &appServerTap{r: r, args: args, env: envNames(env)}
	return t.trace
}

// appServerTap records the conversation with one app-server process at a
// time (the backend runs one; it starts another only after the last one's
// stdout ended).
type appServerTap struct {
	r    *Recorder
	args []string
	env  []string
	run  int // the process being recorded; 0: none (guarded by r.mu)
	// secretQuestions are codex's requests that ask a secret, by request
	// id: requestUserInput's secret questions, an MCP server's form's
	// secret fields, whose answers the agent's reply must not show
	// (guarded by r.mu).
	secretQuestions map[string]secretAsk
}

func (t *appServerTap) trace(sent bool, line []byte) {
	dir := DirIn
	if sent {
		dir = DirOut
	}
	e := &Entry{Kind: KindAppServer, Dir: dir, EOF: line == nil}
	var learned []string
	initialize := false
	var asked secretAsk
	var ids []string // codex's installation ids in a message from codex
	switch {
	case line == nil:
	case json.Valid(line):
		msg := append(json.RawMessage(nil), line...)
		if sent {
			msg, learned = redactLearning(msg)
			msg = summariseInstructions(msg)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			initialize = json.Unmarshal(msg, &m) == nil && m.Method == protocol.Initialize.Method() && len(m.ID) > 0
		} else {
			asked = secretQuestionsOf(msg)
			msg, ids = hideServerIdentity(msg)
			learned = authorizationURLs(msg)
		}
		e.Msg = msg
	default:
		e.Text = string(line)
	}

	r := t.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if asked.id != "" {
		if t.secretQuestions == nil {
			t.secretQuestions = map[string]secretAsk{}
		}
		t.secretQuestions[asked.id] = asked
	}
	if sent && len(t.secretQuestions) > 0 && e.Msg != nil {
		var blanked []string
		e.Msg, blanked = t.redactSecretAnswers(e.Msg)
		learned = append(learned, blanked...)
	}
	for _, s := range learned {
		r.secrets.add(s)
	}
	for _, id := range ids {
		r.addInstallationID(id)
	}
	if sent && line != nil && (t.run == 0 || initialize) {
		// A new process: the client's first message is initialize.
		t.end()
		r.runs++
		t.run = r.runs
		r.active = append(r.active, t.run)
		r.writeLocked(&Entry{Kind: KindAppServerStart, Run: t.run, Args: t.args, Env: t.env})
	}
	if t.run == 0 {
		return // the end of a process already ended
	}
	e.Run = t.run
	r.writeLocked(e)
	if !sent && line == nil {
		t.end()
	}
}

// end ends the current process's run; r.mu is held.
func (t *appServerTap) end() {
	if t.run == 0 {
		return
	}
	if i := slices.Index(t.r.active, t.run); i >= 0 {
		t.r.active = slices.Delete(t.r.active, i, i+1)
	}
	t.run = 0
}

// secretAsk is a request of codex's that asks a secret: its id and the
// secret questions of a requestUserInput, or the secret fields of an MCP
// server's form (mcpServer/elicitation/request).
type secretAsk struct {
	id        string
	questions []string
	fields    []string
}

// secretQuestionsOf reads a message from codex: a request that asks a
// secret, or none.
func secretQuestionsOf(msg json.RawMessage) secretAsk {
	if !bytes.Contains(msg, []byte(`"isSecret"`)) && !bytes.Contains(msg, []byte(methodMCPElicitation)) {
		return secretAsk{}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Questions []struct {
				ID       string `json:"id"`
				IsSecret bool   `json:"isSecret"`
			} `json:"questions"`
			RequestedSchema struct {
				Properties map[string]struct {
					Type  string          `json:"type"`
					Title string          `json:"title"`
					Enum  json.RawMessage `json:"enum"`
					OneOf json.RawMessage `json:"oneOf"`
				} `json:"properties"`
			} `json:"requestedSchema"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || len(m.ID) == 0 {
		return secretAsk{}
	}
	a := secretAsk{id: string(m.ID)}
	switch m.Method {
	case methodRequestUserInput:
		for _, q := range m.Params.Questions {
			if q.IsSecret {
				a.questions = append(a.questions, q.ID)
			}
		}
	case methodMCPElicitation:
		// The agent's rule for a secret field (internal/forms).
		for key, p := range m.Params.RequestedSchema.Properties {
			if p.Type == "string" && len(p.Enum) == 0 && len(p.OneOf) == 0 && secrets.IsFormField(key, p.Title) {
				a.fields = append(a.fields, key)
			}
		}
	}
	if len(a.questions) == 0 && len(a.fields) == 0 {
		return secretAsk{}
	}
	return a
}

// methodRequestUserInput is codex's questions to the user.
const methodRequestUserInput = string(protocol.ToolRequestUserInput)

// methodMCPElicitation is an MCP server's question to the user.
const methodMCPElicitation = string(protocol.McpServerElicitationRequest)

// redactSecretAnswers blanks, in the agent's reply to a request that asked
// a secret, the answers to the secret questions of a requestUserInput
// ({"answers":{"<question>":{"answers":[…]}}}) or the secret fields of an
// MCP server's form ({"content":{"<field>":…}}), and returns the values
// blanked; any other message comes back unchanged. r.mu is held.
func (t *appServerTap) redactSecretAnswers(msg json.RawMessage) (json.RawMessage, []string) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "" || len(m.ID) == 0 || len(m.Result) == 0 {
		return msg, nil
	}
	asked, ok := t.secretQuestions[string(m.ID)]
	if !ok {
		return msg, nil
	}
	delete(t.secretQuestions, string(m.ID))
	v, err := decodeJSON(msg)
	if err != nil {
		return msg, nil
	}
	result, _ := v.(map[string]any)["result"].(map[string]any)
	answers, _ := result["answers"].(map[string]any)
	var blanked []string
	content, _ := result["content"].(map[string]any)
	for _, f := range asked.fields {
		if s, ok := content[f].(string); ok && s != "" && s != Redacted {
			blanked = append(blanked, s)
			content[f] = Redacted
		}
	}
	for _, q := range asked.questions {
		answer, _ := answers[q].(map[string]any)
		given, _ := answer["answers"].([]any)
		for i, a := range given {
			if s, ok := a.(string); ok && s != Redacted {
				blanked = append(blanked, s)
				given[i] = Redacted
			}
		}
	}
	if len(blanked) == 0 {
		return msg, nil
	}
	out, err := encodeJSON(v)
	if err != nil {
		return msg, nil
	}
	return out, blanked
}
