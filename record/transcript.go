// Package record writes and reads session transcripts: NDJSON files holding
// every ACP message an agent exchanged with its editor, each codex run (its
// arguments, the JSONL it printed, how it ended) or, with the app-server
// backend, the JSON-RPC conversation with each codex app-server process
// (both ways), every call of the
// embedded file tools with its result, and the stored files (session
// records, codex rollouts) that session/list and session/load read.
//
// A transcript is written by a [Recorder] (codexacp --record FILE) and read
// back with [Read]; the e2e replay harness turns one into a deterministic test
// that needs neither codex nor a network. Secrets never reach the file: the
// Recorder redacts known secret values, API-key and bearer-token patterns,
// secret-looking fields of ACP messages and codex -c arguments, and records
// the names of environment variables, never their values.
//
// The format is documented in docs/replay.md.
package record

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/codexacp/codexacp/codex"
)

// FormatVersion is the transcript format a Recorder writes. Read accepts
// it and every earlier one: format 2 added blobs (large values stored
// once, blob.go); format 1 transcripts have none.
const FormatVersion = 2

// Entry kinds.
const (
	KindStart      = "start"       // first line: format, agent, context window, root
	KindACP        = "acp"         // one ACP message (dir in: editor → agent, out: agent → editor), or the end of input
	KindCodexStart = "codex_start" // a codex run began: args (redacted), env names, cwd, prompt
	KindCodexLine  = "codex_line"  // one line codex printed on stdout
	KindCodexExit  = "codex_exit"  // a codex run ended: exit code, stderr tail, cancelled, or a start error
	KindFile       = "file"        // the disk state of a file when a tool first touched it
	KindMCPCall    = "mcp_call"    // codex called a file tool
	KindMCPResult  = "mcp_result"  // the tool's result (or error) went back to codex
	KindStored     = "stored"      // a file the agent read to list or load sessions: a session record, a rollout
	KindSkills     = "skills"      // the skills codex listed for a workspace on the exec backend: cwd, skills, or an error
	KindUserConfig = "user_config" // the user's codex sandbox, approval and model settings the agent read at start-up (result)
	KindBlob       = "blob"        // a large value stored once (id), which other lines refer to; Read gives only its id
	KindRollout    = "rollout"     // a record of codex's rollout an exec turn read for refused commands: run, path, line

	KindAppServerStart = "appserver_start" // a codex app-server process began: args (redacted), env names
	KindAppServer      = "appserver"       // one JSON-RPC line of the app-server conversation (dir out: agent → codex, in: codex → agent), or a stream's end
)

// Backends a transcript was recorded with (the start entry's backend).
const (
	BackendExec      = "exec"       // one codex exec per turn: codex_* entries (also when backend is absent)
	BackendAppServer = "app-server" // one codex app-server per agent: appserver* entries
)

// Message directions, seen from the agent: an ACP message from the editor
// or an app-server line from codex is in; what the agent sends is out.
const (
	DirIn  = "in"  // editor → agent; codex app-server → agent
	DirOut = "out" // agent → editor; agent → codex app-server
)

// Entry is one line of a transcript. Which fields are set depends on Kind;
// see the field groups below.
type Entry struct {
	T    float64 `json:"t"` // milliseconds since the recording started (monotonic clock)
	Kind string  `json:"kind"`
	// ID is a blob's id. Read puts blobs back where they are used before
	// it decodes a line, so a blob entry it returns has no other field: it
	// stays in the list so that entries keep the numbers of their lines.
	ID string `json:"id,omitempty"`

	// start
	Format        int    `json:"format,omitempty"`
	Agent         string `json:"agent,omitempty"`          // "codexacp <version>"
	ContextWindow int    `json:"context_window,omitempty"` // the model's context window the agent used (0: unknown)
	// Root, when set, is a directory every workspace path of the transcript
	// lies under; replay maps it to a fresh temporary directory. Without it
	// replay uses the cwd of the first session/new.
	Root string `json:"root,omitempty"`
	// Backend is the agent's codex backend (--backend): BackendExec or
	// BackendAppServer; absent in transcripts of exec sessions recorded
	// before the app-server backend existed.
	Backend string `json:"backend,omitempty"`
	// Models are the models of codex's catalog the agent offered in its
	// model picker (codex's default first), so that a replay's fake codex
	// serves the same catalog.
	Models []Model `json:"models,omitempty"`
	// Model and Effort are the model and reasoning effort the user
	// configured (-c model=, -c model_reasoning_effort=), the agent's
	// defaults; a replay configures its agent the same way.
	Model  string `json:"model,omitempty"`
	Effort string `json:"effort,omitempty"`
	// CodexVersion is what codex --version said (/status shows it); a
	// replay's fake codex says the same.
	CodexVersion string `json:"codex_version,omitempty"`

	// acp, appserver
	Dir string          `json:"dir,omitempty"`
	Msg json.RawMessage `json:"msg,omitempty"`
	// EOF ends a stream: acp in, the editor closed the agent's stdin;
	// appserver out, the agent closed the app-server's stdin; appserver in,
	// the app-server's stdout ended (the process is gone).
	EOF bool `json:"eof,omitempty"`

	// codex_start, codex_line, codex_exit, appserver_start, appserver; also
	// the run of file, mcp_call, mcp_result and rollout (0: no codex run was in
	// progress). An app-server process is a run too, numbered with the exec
	// runs, from its start to the end of its stdout.
	Run    int      `json:"run,omitempty"`
	Args   []string `json:"args,omitempty"`
	Env    []string `json:"env,omitempty"` // names only, sorted
	Cwd    string   `json:"cwd,omitempty"`
	Prompt string   `json:"prompt,omitempty"`
	// Line is a codex stdout line that is JSON (all of them, normally), or
	// a rollout record (rollout, with Path); Text holds a line (or an ACP
	// message) that is not.
	Line json.RawMessage `json:"line,omitempty"`
	Text string          `json:"text,omitempty"`
	// codex_exit: Code is the exit status of a run that exited; Cancelled
	// marks a run stopped by the agent (SIGINT); Error a run that never
	// started or failed otherwise.
	Code      *int   `json:"code,omitempty"`
	Stderr    string `json:"stderr,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
	Error     string `json:"error,omitempty"`

	// mcp_call, mcp_result; Result also of user_config (codex's config/read
	// result, only the keys codex.ParseConfigRead reads)
	Session   string          `json:"session,omitempty"`
	Call      string          `json:"call,omitempty"` // the call's id (also its ACP toolCallId)
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	ToolError *ToolError      `json:"tool_error,omitempty"`

	// skills: what appserver.ConfigServer.ListSkills answered for Cwd (Error: its
	// failure), so that a replay's codex lists the same.
	Skills []codex.Skill `json:"skills,omitempty"`

	// file, stored, rollout
	Path         string  `json:"path,omitempty"`
	Exists       bool    `json:"exists,omitempty"`
	IsDir        bool    `json:"is_dir,omitempty"`
	ParentExists bool    `json:"parent_exists,omitempty"`
	Mode         uint32  `json:"mode,omitempty"`    // permission bits
	Content      *string `json:"content,omitempty"` // UTF-8 content
	Base64       string  `json:"base64,omitempty"`  // content that is not UTF-8
	Size         int64   `json:"size,omitempty"`    // set with Omitted
	Omitted      bool    `json:"omitted,omitempty"` // too large to record
}

// Data returns the content of a file or stored entry.
func (e *Entry) Data() ([]byte, error) {
	switch {
	case e.Content != nil:
		return []byte(*e.Content), nil
	case e.Base64 != "":
		b, err := base64.StdEncoding.DecodeString(e.Base64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Path, err)
		}
		return b, nil
	case e.Omitted:
		return nil, fmt.Errorf("%s: its content (%d bytes) was not recorded", e.Path, e.Size)
	}
	return nil, nil
}

// Model is one model of codex's catalog as the agent knew it (codex.Model).
type Model struct {
	Slug          string   `json:"slug"`
	Name          string   `json:"name,omitempty"`
	Description   string   `json:"description,omitempty"`
	ContextWindow int      `json:"context_window,omitempty"`
	DefaultEffort string   `json:"default_effort,omitempty"` // reasoning effort codex uses when none is chosen
	Efforts       []string `json:"efforts,omitempty"`        // the reasoning efforts the model supports
	// ServiceTiers are the model's service tiers (the fast-mode picker).
	ServiceTiers []ServiceTier `json:"service_tiers,omitempty"`
}

// ServiceTier is one service tier of a model (codex.ServiceTier).
type ServiceTier struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// ToolError is a file tool's error as the model received it.
type ToolError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

// Read parses a transcript. The first entry must be a start entry of a
// known format version. Lines have no length limit. Blobs are put back
// where they are used (references to blobs the transcript does not hold
// are an error); each blob line is returned as an entry of KindBlob with
// its id only.
func Read(r io.Reader) ([]Entry, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading transcript: %w", err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	blobs, isBlob, err := collectBlobs(lines)
	if err != nil {
		return nil, err
	}
	var entries []Entry
	for i, line := range lines {
		n := i + 1
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e Entry
		if isBlob[i] {
			id, t, _, _, _, _ := parseBlob(line)
			e = Entry{T: t, Kind: KindBlob, ID: id}
		} else {
			line, err := blobs.expand(line)
			if err != nil {
				return nil, fmt.Errorf("transcript line %d: %w", n, err)
			}
			if err := json.Unmarshal(line, &e); err != nil {
				return nil, fmt.Errorf("transcript line %d: %w", n, err)
			}
		}
		if len(entries) == 0 {
			if e.Kind != KindStart {
				return nil, fmt.Errorf("transcript line %d: first entry is %q, want %q", n, e.Kind, KindStart)
			}
			if e.Format < 1 || e.Format > FormatVersion {
				return nil, fmt.Errorf("transcript format %d: this codexacp reads formats 1 to %d", e.Format, FormatVersion)
			}
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, errors.New("empty transcript")
	}
	return entries, nil
}

// Encode returns e as one NDJSON line (with the newline), HTML characters
// unescaped so that commands and diffs stay readable.
func Encode(e *Entry) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write writes entries as a transcript, in the form a Recorder writes:
// large values stored once as blobs (KindBlob entries given are left
// out: Write makes its own), the start entry of the current format.
func Write(w io.Writer, entries []Entry) error {
	c := newCompactor()
	for i := range entries {
		e := entries[i]
		switch e.Kind {
		case KindBlob:
			continue
		case KindStart:
			e.Format = FormatVersion
		}
		b, err := Encode(&e)
		if err != nil {
			return fmt.Errorf("transcript entry %d: %w", i, err)
		}
		if _, err := w.Write(c.line(bytes.TrimSuffix(b, []byte("\n")))); err != nil {
			return err
		}
	}
	return nil
}
