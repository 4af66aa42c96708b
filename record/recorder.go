package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/internal/regularfile"
)

// Recorder writes one transcript. It is safe for concurrent use: entries
// from the ACP streams, codex runs and tool calls are serialised in the order
// they happen. Each entry is written at once (no buffering), so a transcript
// survives an agent the editor kills.
//
// Recording never disturbs the session: after a write error the Recorder
// drops further entries and reports the error from Err and Close.
type Recorder struct {
	start time.Time

	mu           sync.Mutex
	w            io.Writer
	closer       io.Closer
	path         string
	err          error
	secrets      secretSet
	runs         int              // runs started so far
	active       []int            // runs in progress, oldest first
	threadRuns   map[string]int   // the latest exec run of each thread (Rollout)
	touched      map[string]bool  // paths whose disk state was recorded
	dirs         []dirPlaceholder // directories written as placeholders (SetDirs)
	backend      string           // SetBackend
	models       []Model          // SetCatalog
	model        string           // SetCatalog
	effort       string           // SetCatalog
	codexVersion string           // SetCodexVersion

	// What SetDirs and SetMachine hide: dirs above holds the state
	// directory, codex's home and the user's home, longest first.
	storeDirs []dirPlaceholder // the state directory and codex's home (SetDirs)
	home      string           // the user's home (SetMachine)
	host      string           // the machine's name, when long enough to replace (SetMachine)
	// installationIDs are codex's installation ids (SetDirs, and learned
	// from app-server messages), replaced wherever they appear.
	installationIDs [][]byte
	// compact stores large values once (blob.go).
	compact *compactor
	// sessions tracks what the editor named, for keeping other
	// workspaces' sessions out (worlds.go).
	world world
}

// New returns a Recorder writing to w.
func New(w io.Writer) *Recorder {
	return &Recorder{start: time.Now(), w: w, touched: map[string]bool{}, compact: newCompactor()}
}

// errHardLinked is wrapped by Create's error for an existing file with
// more than one name: overwriting it would change the file of the others.
var errHardLinked = errors.New("has other names (hard links)")

// Create starts a transcript file at path. When path is an existing
// directory (or ends in a separator), a new file named
// codexacp-<time>-<pid>.ndjson is made inside it, so that every agent
// process an editor starts gets its own transcript. Otherwise the file at
// path is created, or, when it is a regular file of that one name (an
// earlier run's transcript), overwritten. It is never written through a
// link: a symbolic link (dangling or not) or a file with other names (hard
// links) is refused, and so is a FIFO or device, without waiting on it.
func Create(path string) (*Recorder, error) {
	if path == "" {
		return nil, errors.New("record: no transcript path")
	}
	var f *os.File
	if fi, err := os.Stat(path); (err == nil && fi.IsDir()) || os.IsPathSeparator(path[len(path)-1]) {
		if err := os.MkdirAll(path, 0o700); err != nil {
			return nil, fmt.Errorf("record: %w", err)
		}
		name := fmt.Sprintf("codexacp-%s-%d.ndjson", time.Now().Format("20060102-150405"), os.Getpid())
		path = filepath.Join(path, name)
		// Transcripts hold file contents and prompts: readable by the user only.
		if f, err = regularfile.Create(path, 0o600, true); err != nil {
			return nil, fmt.Errorf("record: %w", err)
		}
	} else if f, err = createTranscript(path); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	r := New(f)
	r.closer = f
	r.path = path
	return r, nil
}

// createTranscript opens the transcript file at path for writing: new, or
// an existing regular file of one name, truncated and made 0600 (it held an
// earlier transcript, or is the user's to give up: they named it).
func createTranscript(path string) (*os.File, error) {
	f, fi, err := regularfile.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600, regularfile.NoFollowLink)
	if err != nil {
		return nil, err
	}
	if n := links(fi); n > 1 {
		f.Close()
		return nil, fmt.Errorf("%s %w: it has %d names, and overwriting it would change the file under the others", path, errHardLinked, n)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	// An existing file keeps its mode through the open: tighten it.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Path is the transcript file's path ("" for a Recorder made with New).
func (r *Recorder) Path() string { return r.path }

// AddSecretsFromEnv treats the values of secret-looking variables
// (names containing KEY, TOKEN, SECRET, PASSWORD, AUTH, COOKIE, CREDENTIAL)
// of a KEY=VALUE list, typically os.Environ(), as secrets.
func (r *Recorder) AddSecretsFromEnv(env []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets.addEnv(env)
}

// SetBackend names the agent's codex backend (BackendExec,
// BackendAppServer) in the start entry, which tells a replay how to run the
// agent. Call it before Start.
func (r *Recorder) SetBackend(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.backend = name
}

// SetCatalog names, in the start entry, the models of codex's catalog the
// agent offers (acp.Options.Models), which a replay's fake codex serves as
// its catalog, and the model and reasoning effort the user configured
// (acp.Options.DefaultModel, DefaultEffort), which a replay gives its
// agent. Call it before Start.
func (r *Recorder) SetCatalog(models []codex.Model, model, effort string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.models, r.model, r.effort = nil, model, effort
	for _, m := range models {
		rm := Model{Slug: m.Slug, Name: m.Name, Description: m.Description,
			ContextWindow: m.ContextWindow, DefaultEffort: m.DefaultEffort, Efforts: slices.Clone(m.Efforts)}
		for _, t := range m.ServiceTiers {
			rm.ServiceTiers = append(rm.ServiceTiers, ServiceTier{ID: t.ID, Name: t.Name, Description: t.Description})
		}
		r.models = append(r.models, rm)
	}
}

// SetCodexVersion names codex's version in the start entry. Call it
// before Start.
func (r *Recorder) SetCodexVersion(v string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.codexVersion = v
}

// Start writes the transcript's first entry. Call it once, before anything
// else is recorded.
func (r *Recorder) Start(agent string, contextWindow int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeLocked(&Entry{Kind: KindStart, Format: FormatVersion, Agent: agent, ContextWindow: contextWindow, Backend: r.backend, Models: r.models, Model: r.model, Effort: r.effort, CodexVersion: r.codexVersion})
}

// UserConfig records the user's codex settings the agent read at start-up
// (codex.ReadUserConfigOnce), when any is set: a replay makes its agent
// read them too, from its fake codex. Only the settings codexacp uses are
// recorded, never the rest of the user's configuration.
func (r *Recorder) UserConfig(c codex.UserConfig) {
	if !c.Configured() && c.Model == "" && c.ReasoningEffort == "" {
		return
	}
	r.write(&Entry{Kind: KindUserConfig, Result: c.ConfigRead()})
}

// Err returns the first write error.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if errors.Is(r.err, errClosed) {
		return nil
	}
	return r.err
}

// Close closes the transcript file (if Create made it) and returns the first
// error the recorder met.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if r.closer != nil {
		err = r.closer.Close()
		r.closer = nil
	}
	if r.err == nil {
		r.err = err
	}
	if r.err == nil {
		// Later entries (a goroutine still finishing) are dropped quietly.
		r.err = errClosed
		return nil
	}
	if errors.Is(r.err, errClosed) {
		return nil
	}
	return r.err
}

var errClosed = errors.New("record: recorder closed")

// write stamps, redacts and writes e.
func (r *Recorder) write(e *Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeLocked(e)
}

func (r *Recorder) writeLocked(e *Entry) {
	if r.err != nil {
		return
	}
	e.T = math.Round(float64(time.Since(r.start).Microseconds())) / 1000
	b, err := Encode(e)
	if err != nil {
		r.err = fmt.Errorf("record: encoding a %s entry: %w", e.Kind, err)
		return
	}
	b = r.abbreviate(r.secrets.scrub(b))
	b = r.compact.line(bytes.TrimSuffix(b, []byte("\n")))
	if _, err := r.w.Write(b); err != nil {
		r.err = fmt.Errorf("record: %w", err)
	}
}

// Input returns a reader that passes in through and records each line read
// from it as an ACP message from the editor, and its end.
func (r *Recorder) Input(in io.Reader) io.Reader {
	return &inputTap{r: r, in: in}
}

// Output returns a writer that writes to out and records each line written
// as an ACP message to the editor. A line is recorded before it is written,
// so the transcript has it even when the editor reacts at once by closing
// the agent's input (which ends the recording).
func (r *Recorder) Output(out io.Writer) io.Writer {
	return &outputTap{r: r, out: out}
}

// acpLine records one ACP message line. Each secret blanked in an editor's
// message (an MCP server's header, a secret-looking env value or argument)
// becomes a known secret, replaced wherever else it appears: the agent
// hands those to codex, which may quote them back. The answer to a
// session/list keeps only the recording's workspaces (world).
func (r *Recorder) acpLine(dir string, line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	e := &Entry{Kind: KindACP, Dir: dir}
	var learned []string
	switch {
	case json.Valid(line) && dir == DirIn:
		e.Msg, learned = redactLearning(json.RawMessage(line))
	case json.Valid(line):
		e.Msg = redactMessage(json.RawMessage(line))
	default:
		e.Text = string(line)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range learned {
		r.secrets.add(s)
	}
	if e.Msg != nil {
		if dir == DirIn {
			r.world.request(e.Msg)
		} else {
			e.Msg = r.world.answer(e.Msg)
		}
	}
	r.writeLocked(e)
}

type inputTap struct {
	r       *Recorder
	in      io.Reader
	partial []byte
	ended   bool
}

func (t *inputTap) Read(p []byte) (int, error) {
	n, err := t.in.Read(p)
	t.partial = append(t.partial, p[:n]...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.r.acpLine(DirIn, t.partial[:i])
		t.partial = t.partial[i+1:]
	}
	if err != nil && !t.ended {
		t.ended = true
		t.r.acpLine(DirIn, t.partial)
		t.partial = nil
		if errors.Is(err, io.EOF) {
			t.r.write(&Entry{Kind: KindACP, Dir: DirIn, EOF: true})
		}
	}
	return n, err
}

type outputTap struct {
	r       *Recorder
	out     io.Writer
	mu      sync.Mutex
	partial []byte
}

func (t *outputTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.r.acpLine(DirOut, t.partial[:i])
		t.partial = t.partial[i+1:]
	}
	return t.out.Write(p)
}
