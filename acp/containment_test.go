package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/stress"
)

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// fsRoutes are the two ways a write leaves the agent: through the editor's
// fs methods, or to the local disk when the editor has none.
var fsRoutes = []struct {
	name string
	fs   bool
}{{"editor", true}, {"local disk", false}}

// asked reports whether the calls since before include a permission request.
func (th *toolsHarness) askedSince(before int) bool {
	for _, c := range th.editor.Calls()[before:] {
		if c.Method == "session/request_permission" {
			return true
		}
	}
	return false
}

// In auto mode, what codex's sandbox keeps read-only asks, judged where the
// write lands: through an alias, in a git directory of any name, and in the
// directory a .git file points to.
func TestAutoModeProtectsByResolvedLocation(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true, WriteThrough: true, Permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return fakeeditor.Select("allow_always")
	}}, backend.ModeAuto)
	ws := th.cwd
	mustWrite(t, filepath.Join(ws, ".git", "config"), "[core]\n")
	mustSymlink(t, ".git", filepath.Join(ws, "g"))
	// A git directory made by `git init --separate-git-dir`, with another name.
	other := filepath.Join(ws, "othername")
	mustWrite(t, filepath.Join(other, "HEAD"), "ref: refs/heads/main\n")
	mustWrite(t, filepath.Join(other, "config"), "[core]\n")
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(other, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A worktree in a second workspace root whose .git file points into it.
	wt := t.TempDir()
	wt, _ = filepath.EvalSymlinks(wt)
	mustWrite(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(ws, "pointed")+"\n")
	mustWrite(t, filepath.Join(ws, "pointed", "config"), "[core]\n")
	s, _ := th.agent.session(th.session)
	s.dirs = append(s.dirs, wt)

	for _, tc := range []struct {
		rel  string
		asks bool
	}{
		{"a.txt", false},
		{"g/config", true},
		{"othername/config", true},
		{"pointed/config", true},
		{".agents/skills/x/SKILL.md", true},
		{".aws/config", true},
		{".codex/config.toml", true},
		{"sub/.git/config", true},
		{".github/workflows/ci.yml", false},
	} {
		before := len(th.editor.Calls())
		path := filepath.Join(ws, tc.rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		res := th.call(t, "write_text_file", map[string]any{"path": path, "content": "x\n"})
		if res.IsError {
			t.Fatalf("%s: %+v", tc.rel, res.StructuredContent)
		}
		if asked := th.askedSince(before); asked != tc.asks {
			t.Errorf("%s: asked = %v, want %v", tc.rel, asked, tc.asks)
		}
	}
}

// A workspace that itself lies under a directory named .codex is not
// protected as a whole: only what lies below a root counts.
func TestWorkspaceUnderDotCodexDoesNotAsk(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true}, backend.ModeAuto)
	nested := filepath.Join(th.cwd, ".codex", "project")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	s, _ := th.agent.session(th.session)
	s.cwd = nested
	before := len(th.editor.Calls())
	res := th.call(t, "write_text_file", map[string]any{"path": filepath.Join(nested, "a.txt"), "content": "x\n"})
	if res.IsError || th.askedSince(before) {
		t.Fatalf("isError=%v asked=%v", res.IsError, th.askedSince(before))
	}
}

// codex's home is protected where it lies, under any name, once resolved:
// inside a workspace root it asks like .codex; a workspace inside it (or
// that is it) is the user's choice and does not ask.
func TestCodexHomeProtectedByLocation(t *testing.T) {
	for _, tc := range []struct {
		name string
		home func(ws string) string // CODEX_HOME for the workspace ws
		rel  string
		asks bool
	}{
		{"home below the root", func(ws string) string { return filepath.Join(ws, "state") }, "state/config.toml", true},
		{"home below the root, other file", func(ws string) string { return filepath.Join(ws, "state") }, "a.txt", false},
		{"home through a link", func(ws string) string {
			link := filepath.Join(t.TempDir(), "home")
			mustSymlink(t, filepath.Join(ws, "state"), link)
			return link
		}, "state/skills/x/SKILL.md", true},
		{"workspace is the home", func(ws string) string { return ws }, "config.toml", false},
		{"workspace inside the home", func(ws string) string { return filepath.Dir(ws) }, "a.txt", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			th := startTools(t, fakeeditor.Options{FS: true, WriteThrough: true}, backend.ModeAuto)
			ws := th.cwd
			if err := os.MkdirAll(filepath.Join(ws, "state"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("CODEX_HOME", tc.home(ws))
			path := filepath.Join(ws, tc.rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			before := len(th.editor.Calls())
			res := th.call(t, "write_text_file", map[string]any{"path": path, "content": "x\n"})
			if res.IsError {
				t.Fatalf("%+v", res.StructuredContent)
			}
			if asked := th.askedSince(before); asked != tc.asks {
				t.Errorf("asked = %v, want %v", asked, tc.asks)
			}
		})
	}
}

// The file swapped for a link to outside while the user is asked: nothing is
// written there, on either route.
func TestSwapDuringPermissionQuestionWritesNothingOutside(t *testing.T) {
	t.Parallel()
	for _, route := range fsRoutes {
		t.Run(route.name, func(t *testing.T) {
			outside := filepath.Join(t.TempDir(), "victim")
			mustWrite(t, outside, "precious\n")
			var path string
			th := startTools(t, fakeeditor.Options{FS: route.fs, WriteThrough: true,
				Permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
					// The model's shell swaps the file while the user reads the diff.
					_ = os.Remove(path)
					_ = os.Symlink(outside, path)
					return fakeeditor.Select("allow_once")
				}}, backend.ModeAsk)
			path = filepath.Join(th.cwd, "a.txt")
			mustWrite(t, path, "one\n")
			res := th.call(t, "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})
			if code, _ := errorCode(res); code != fsops.CodePermission {
				t.Errorf("code %d, want Permission denied: %+v", code, res.StructuredContent)
			}
			if got, _ := os.ReadFile(outside); string(got) != "precious\n" {
				t.Fatalf("outside file = %q", got)
			}
		})
	}
}

// A model flipping a workspace file between a file and a link to outside
// with its own shell, while writing it in auto mode, never writes outside:
// not through the local disk, not through an editor that writes through
// links.
func TestFlippingLinkThroughToolsNeverWritesOutside(t *testing.T) {
	t.Parallel()
	iterations := stress.Size(t, 100, 300) // per route
	for _, route := range fsRoutes {
		t.Run(route.name, func(t *testing.T) {
			outside := filepath.Join(t.TempDir(), "victim")
			mustWrite(t, outside, "precious\n")
			th := startTools(t, fakeeditor.Options{FS: route.fs, WriteThrough: true}, backend.ModeAuto)
			path := filepath.Join(th.cwd, "a.txt")
			mustWrite(t, path, "inside\n")
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				tmp := path + ".tmp"
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					_ = os.Remove(tmp)
					if i%2 == 0 {
						_ = os.Symlink(outside, tmp)
					} else {
						_ = os.WriteFile(tmp, []byte("inside\n"), 0o644)
					}
					_ = os.Rename(tmp, path)
					time.Sleep(time.Duration(i%4) * 50 * time.Microsecond) // pace, so writes meet both states
				}
			})
			const changed = "Path changed during the write: "
			var ok, refused, hits, flagged int
			for i := range iterations {
				res := th.call(t, "write_text_file", map[string]any{"path": path, "content": fmt.Sprintf("write %d\n", i)})
				_, msg := errorCode(res)
				if res.IsError {
					refused++
				} else {
					ok++
				}
				if strings.HasPrefix(msg, changed) {
					flagged++
				}
				if got, _ := os.ReadFile(outside); string(got) != "precious\n" {
					hits++
					// The editor followed a link swapped in after our
					// last check: that cannot be prevented, but it is
					// never passed over in silence.
					if !strings.HasPrefix(msg, changed+path) {
						t.Errorf("write %d landed outside and was not reported: %+v", i, res.StructuredContent)
					}
					if where, named := strings.CutPrefix(msg, changed+path+" now leads to "); named && where != outside {
						t.Errorf("write %d landed in %s, reported as %s", i, outside, where)
					}
					mustWrite(t, outside, "precious\n")
				}
			}
			close(stop)
			wg.Wait()
			if hits > 0 && !route.fs {
				t.Fatalf("written outside the workspace %d times", hits)
			}
			// Every write the editor was asked for named a resolved path
			// inside the workspace. (An editor that itself follows a link
			// swapped in after our last check is beyond our reach: see
			// docs/reliability.md.)
			for _, c := range th.editor.Calls() {
				if w, isWrite := c.Params.(acpsdk.WriteTextFileRequest); isWrite && w.Path != path {
					t.Fatalf("the editor was asked to write %s", w.Path)
				}
			}
			// The user saw each one in the tool call.
			if err := th.editor.Sync(th.ctx); err != nil {
				t.Fatal(err)
			}
			shown := 0
			for _, u := range th.editor.Updates() {
				if tu := u.Update.ToolCallUpdate; tu != nil && tu.Status != nil && *tu.Status == acpsdk.ToolCallStatusFailed &&
					len(tu.Content) > 0 && tu.Content[0].Content != nil && tu.Content[0].Content.Content.Text != nil &&
					strings.HasPrefix(tu.Content[0].Content.Content.Text.Text, changed+path) {
					shown++
				}
			}
			if shown != flagged {
				t.Errorf("%d writes reported to the model as changed during the write, %d shown to the user", flagged, shown)
			}
			t.Logf("%d writes: %d inside, %d refused, %d outside, %d reported as changed during the write",
				iterations, ok, refused, hits, flagged)
		})
	}
}

// A dangling link inside the workspace is refused before the editor is
// asked to write anything, wherever it points.
func TestDanglingLinkRefusedBeforeEditor(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true, WriteThrough: true}, backend.ModeAuto)
	out := filepath.Join(t.TempDir(), "created-outside")
	link := filepath.Join(th.cwd, "link")
	mustSymlink(t, out, link)
	res := th.call(t, "write_text_file", map[string]any{"path": link, "content": "x\n"})
	if code, _ := errorCode(res); code != fsops.CodePermission {
		t.Fatalf("code %d, want -32002: %+v", code, res.StructuredContent)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("created outside")
	}
	for _, c := range th.editor.Calls() {
		if c.Method == "fs/write_text_file" {
			t.Fatalf("the editor was asked to write %+v", c.Params)
		}
	}
}

// An editor read that never answers holds the file only until the bound:
// the call fails, and the same file can be edited right after.
func TestEditorThatNeverAnswersReleasesTheFile(t *testing.T) {
	t.Parallel()
	var hang sync.Once
	th := startToolsWith(t, Options{EditorTimeout: 200 * time.Millisecond}, fakeeditor.Options{FS: true,
		BeforeFS: func(ctx context.Context, method, path string) {
			hang.Do(func() { <-ctx.Done() }) // the first request is never answered
		}}, backend.ModeAuto)
	path := filepath.Join(th.cwd, "a.txt")
	mustWrite(t, path, "one\n")
	res := th.call(t, "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})
	if _, msg := errorCode(res); !res.IsError || !strings.Contains(msg, "did not answer") {
		t.Fatalf("first edit: %+v", res.StructuredContent)
	}
	res = th.call(t, "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})
	if res.IsError {
		t.Fatalf("second edit: %+v", res.StructuredContent)
	}
}

// When the turn ends (codex died) while an editor read is pending, the
// read ends with it and the file is free for the next turn.
func TestTurnEndReleasesPendingEditorRead(t *testing.T) {
	t.Parallel()
	reading := make(chan struct{})
	var once sync.Once
	th := startTools(t, fakeeditor.Options{FS: true, BeforeFS: func(ctx context.Context, method, path string) {
		once.Do(func() { close(reading); <-ctx.Done() })
	}}, backend.ModeAuto)
	path := filepath.Join(th.cwd, "a.txt")
	mustWrite(t, path, "one\n")
	result := make(chan *mcpsdk.CallToolResult, 1)
	go func() {
		res, _ := th.client.CallTool(th.ctx, &mcpsdk.CallToolParams{Name: "edit_text_file",
			Arguments: map[string]any{"path": path, "old_string": "one", "new_string": "two"}})
		result <- res
	}()
	<-reading
	if err := th.editor.Conn.Cancel(th.ctx, acpsdk.CancelNotification{SessionId: th.session}); err != nil {
		t.Fatal(err)
	}
	<-th.turnDone
	if res := <-result; res == nil || !res.IsError {
		t.Fatalf("the pending edit did not fail: %+v", res)
	}
	// A new turn edits the same file.
	go th.prompt(th.session, "again")
	<-th.turnStarted
	res := th.call(t, "edit_text_file", map[string]any{"path": path, "old_string": "one", "new_string": "two"})
	if res.IsError {
		t.Fatalf("the file is still held: %+v", res.StructuredContent)
	}
}

// A file over the editor's message size is read by line ranges and refused
// for edits up front; a large write never makes a line over 10 MiB.
func TestLargeFilesThroughTheEditor(t *testing.T) {
	t.Parallel()
	th := startTools(t, fakeeditor.Options{FS: true}, backend.ModeAuto)
	big := filepath.Join(th.cwd, "big.txt")
	var b strings.Builder
	for i := 0; b.Len() < 6<<20; i++ {
		fmt.Fprintf(&b, "line %07d %s\n", i+1, strings.Repeat("x", 80))
	}
	mustWrite(t, big, b.String())
	before := len(th.editor.Calls())
	res := th.call(t, "read_text_file", map[string]any{"path": big, "line": 1000, "limit": 3})
	if res.IsError {
		t.Fatalf("read: %+v", res.StructuredContent)
	}
	m := res.StructuredContent.(map[string]any)
	if got := m["content"].(string); !strings.HasPrefix(got, "line 0001000 ") || strings.Count(got, "\n") != 3 {
		t.Errorf("content = %.80q", got)
	}
	var asked []acpsdk.ReadTextFileRequest
	for _, c := range th.editor.Calls()[before:] {
		if r, ok := c.Params.(acpsdk.ReadTextFileRequest); ok {
			asked = append(asked, r)
		}
	}
	if len(asked) != 1 || asked[0].Line == nil || *asked[0].Line != 1000 || asked[0].Limit == nil || *asked[0].Limit != 3 {
		t.Errorf("editor reads = %+v, want one of line 1000, limit 3", asked)
	}
	before = len(th.editor.Calls())
	res = th.call(t, "edit_text_file", map[string]any{"path": big, "old_string": "line 0001000 ", "new_string": "LINE"})
	if code, _ := errorCode(res); code != fsops.CodeTooLarge {
		t.Errorf("edit of a huge file: code %d, want %d", code, fsops.CodeTooLarge)
	}
	if n := len(th.editor.Calls()) - before; n != 0 {
		t.Errorf("the editor was asked %d times for a file too large to edit", n)
	}

	// Rewriting a 3.9 MiB file of quote- and tab-heavy text: old and new
	// text together escape to more than 10 MiB, yet every line sent stays
	// under it (the update's diff is trimmed).
	mid := filepath.Join(th.cwd, "mid.txt")
	mustWrite(t, mid, strings.Repeat("\t\"a\"\t\"b\"\n", 3900<<10/10))
	res = th.call(t, "write_text_file", map[string]any{"path": mid, "content": strings.Repeat("\t\"c\"\t\"d\"\n", 3900<<10/10)})
	if res.IsError {
		t.Fatalf("rewrite: %+v", res.StructuredContent)
	}
	for _, raw := range th.editor.Raw() {
		if len(raw) >= 10<<20 {
			var msg struct{ Method string }
			_ = json.Unmarshal(raw, &msg)
			t.Errorf("a %d-byte line (%s) was sent", len(raw), msg.Method)
		}
	}
}

// Content whose fs/write_text_file message would exceed the line limit is
// refused before it is sent (the SDK escapes <, > and & to six bytes).
func TestEditorWriteSizeChecked(t *testing.T) {
	t.Parallel()
	if err := checkEditorWriteSize("/w/a", []byte(strings.Repeat("a\n", 3<<20))); err != nil {
		t.Errorf("6 MiB of plain text: %v", err)
	}
	err := checkEditorWriteSize("/w/a", []byte(strings.Repeat("<", 2<<20)))
	if te, ok := err.(*fsops.Error); !ok || te.Code != fsops.CodeTooLarge {
		t.Errorf("2 MiB of '<' (12 MiB escaped): %v", err)
	}
}

// Load: 20 sessions editing one file at once, half of them through a
// symlink alias, 200 edits each in CI (20 under the race detector, 10 in the
// quick loop): every acknowledged edit is in the file. Each edit rewrites
// the whole growing file, so the full run is by far the longest test of the
// package.
func TestManySessionsEditOneFileThroughAliases(t *testing.T) {
	t.Parallel()
	sessions, edits := 20, stress.Size(t, 10, 200)
	if raceEnabled {
		edits = min(edits, 20) // the same interleavings, fewer of them
	}
	th := startTools(t, fakeeditor.Options{FS: true}, backend.ModeAuto)
	real := filepath.Join(th.cwd, "shared.txt")
	alias := filepath.Join(th.cwd, "alias.txt")
	mustWrite(t, real, "END\n")
	mustSymlink(t, real, alias)

	clients := []*mcpsdk.ClientSession{th.client}
	for len(clients) < sessions {
		resp, err := th.editor.Conn.NewSession(th.ctx, acpsdk.NewSessionRequest{Cwd: th.cwd, McpServers: []acpsdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := th.editor.Conn.SetSessionMode(th.ctx, acpsdk.SetSessionModeRequest{SessionId: resp.SessionId, ModeId: acpsdk.SessionModeId(backend.ModeAuto)}); err != nil {
			t.Fatal(err)
		}
		go th.prompt(resp.SessionId, "edit")
		<-th.turnStarted
		s, err := th.agent.session(resp.SessionId)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, th.connect(t, s.toolsToken))
	}
	var wg sync.WaitGroup
	failures := make(chan string, sessions*edits)
	for n, cs := range clients {
		path := real
		if n%2 == 1 {
			path = alias
		}
		wg.Go(func() {
			for i := range edits {
				res, err := cs.CallTool(th.ctx, &mcpsdk.CallToolParams{Name: "edit_text_file", Arguments: map[string]any{
					"path": path, "old_string": "END\n", "new_string": fmt.Sprintf("s%02d-%03d\nEND\n", n, i)}})
				if err != nil || res.IsError {
					failures <- fmt.Sprintf("session %d edit %d: %v %+v", n, i, err, res)
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	buf, _ := th.editor.Buffer(real)
	if got := strings.Count(buf, "\n") - 1; got != sessions*edits {
		t.Fatalf("%d of %d acknowledged edits kept", got, sessions*edits)
	}
	if _, open := th.editor.Buffer(alias); open {
		t.Error("the editor was sent the alias path, not the file")
	}
	t.Logf("%d sessions × %d edits (half through a symlink alias): 0 lost", sessions, edits)
}
