package record

import (
	"encoding/json"
	"os"
	"slices"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/internal/secrets"
)

// AppServerTrace returns a codex.AppServerOptions.Trace that records the
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
// known secrets and secret patterns, as codex exec's output does.
func (r *Recorder) AppServerTrace(opts codex.AppServerOptions) func(sent bool, line []byte) {
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	args := []string{"app-server"}
	for _, kv := range opts.Config {
		args = append(args, "-c", secrets.RedactConfigArg(kv))
	}
	r.AddSecretsFromEnv(env)
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
}

func (t *appServerTap) trace(sent bool, line []byte) {
	dir := DirIn
	if sent {
		dir = DirOut
	}
	e := &Entry{Kind: KindAppServer, Dir: dir, EOF: line == nil}
	var learned []string
	initialize := false
	switch {
	case line == nil:
	case json.Valid(line):
		msg := append(json.RawMessage(nil), line...)
		if sent {
			msg, learned = redactLearning(msg)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			initialize = json.Unmarshal(msg, &m) == nil && m.Method == "initialize" && len(m.ID) > 0
		}
		e.Msg = msg
	default:
		e.Text = string(line)
	}

	r := t.r
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range learned {
		r.secrets.add(s)
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
