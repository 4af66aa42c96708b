package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/e2e/codextest"
	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// commandNames waits for the session's available_commands_update and
// returns the command names it lists.
func commandNames(t *testing.T, e *env) []string {
	t.Helper()
	cmds, err := e.editor.WaitForCommands(e.ctx, e.session)
	if err != nil {
		t.Fatalf("no available_commands_update: %v", err)
	}
	names := make([]string, 0, len(cmds))
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	return names
}

// Each backend lists what it offers; /status answers without a model
// request.
func TestSlashStatus(t *testing.T) { eachBackend(t, testSlashStatus) }

func testSlashStatus(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	want := map[string]string{
		"exec":       "status init review review-branch review-commit skills undo rename",
		"app-server": "status init review review-branch review-commit compact goal skills mcp hooks plan undo rename",
	}[backend]
	names := strings.Join(commandNames(t, e), " ")
	if !strings.HasPrefix(names, want) {
		t.Errorf("commands = %s\nwant      %s…", names, want)
	}

	resp := e.mustPrompt("/status")
	if resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stopReason = %q", resp.StopReason)
	}
	if n := len(e.mock.Requests()); n != 0 {
		t.Errorf("/status made %d model requests", n)
	}
	text := agentText(e)
	// The version of the codex under test, whichever it is
	// (CODEXACP_CODEX_PATH may name another than the pinned one).
	version, err := codex.Version(e.ctx, codextest.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Model: gpt-5.5", "Mode: ask", "Backend: " + backend, "Codex thread: none yet", "Codex version: " + version} {
		if !strings.Contains(text, s) {
			t.Errorf("/status lacks %q:\n%s", s, text)
		}
	}
}

// A slash command the agent does not know reaches the model as typed.
func TestSlashUnknownReachesModel(t *testing.T) { eachBackend(t, testSlashUnknownReachesModel) }

func testSlashUnknownReachesModel(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("no such command here")))
	e.mustPrompt("/foo bar baz")
	reqs := e.mock.Requests()
	if len(reqs) != 1 || !strings.Contains(strings.Join(reqs[0].Texts("user"), "\n"), "/foo bar baz") {
		t.Fatalf("the model did not get /foo as typed: %d requests", len(reqs))
	}
	if got := agentText(e); got != "no such command here" {
		t.Errorf("message = %q", got)
	}
}

// /init asks codex for AGENTS.md through our file tools: the editor gets
// the write, with a diff, after the user allowed it.
func TestSlashInit(t *testing.T) { eachBackend(t, testSlashInit) }

func testSlashInit(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, permission: func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return fakeeditor.Select("allow_once")
	}})
	path := filepath.Join(e.cwd, "AGENTS.md")
	content := "# Repository guide\n\nRun `go test ./...`.\n"
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "c1", "write_text_file", map[string]any{"path": path, "content": content})),
		mockapi.Reply(mockapi.Message("AGENTS.md written")),
	)
	e.mustPrompt("/init mention the tests")
	prompt := strings.Join(e.mock.Requests()[0].Texts("user"), "\n")
	if !strings.Contains(prompt, "AGENTS.md") || !strings.Contains(prompt, "write_text_file") || !strings.Contains(prompt, "mention the tests") {
		t.Errorf("the model's prompt:\n%s", prompt)
	}
	var wrote bool
	for _, c := range e.editor.Calls() {
		if w, ok := c.Params.(acpsdk.WriteTextFileRequest); ok && w.Path == path && w.Content == content {
			wrote = true
		}
	}
	if !wrote {
		t.Errorf("no fs/write_text_file of AGENTS.md")
	}
	var diff bool
	for _, u := range toolUpdates(e) {
		var content []acpsdk.ToolCallContent
		if u.ToolCall != nil {
			content = u.ToolCall.Content
		} else if u.ToolCallUpdate != nil {
			content = u.ToolCallUpdate.Content
		}
		for _, c := range content {
			if c.Diff != nil && c.Diff.Path == path && c.Diff.OldText == nil && c.Diff.NewText == content0(content) {
				diff = true
			}
		}
	}
	if !diff {
		t.Errorf("no diff of the new AGENTS.md in the tool calls")
	}
	if got, _ := e.editor.Buffer(path); got != content {
		t.Errorf("AGENTS.md in the editor = %q", got)
	}
}

// content0 is the new text of the first diff in content.
func content0(content []acpsdk.ToolCallContent) string {
	for _, c := range content {
		if c.Diff != nil {
			return c.Diff.NewText
		}
	}
	return ""
}

// gitRepo makes the workspace a git repository with one commit and an
// uncommitted change.
func gitRepo(t *testing.T, e *env) {
	t.Helper()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = e.cwd
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	e.writeFile("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n")
	run("add", ".")
	run("commit", "-qm", "calc")
	e.writeFile("calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n")
}

// reviewFinding is the model's answer to a review, in the JSON shape codex
// asks reviewers for.
const reviewFinding = `{"findings":[{"title":"[P1] Add subtracts","body":"Add returns a - b.","confidence_score":0.9,"priority":1,"code_location":{"absolute_file_path":"FILE","line_range":{"start":3,"end":3}}}],"overall_correctness":"patch is incorrect","overall_explanation":"Add is broken.","overall_confidence_score":0.9}`

// /review runs codex's review of the working tree as a turn: the model
// gets codex's review prompt with the diff, and its findings are shown.
func TestSlashReview(t *testing.T) { eachBackend(t, testSlashReview) }

func testSlashReview(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	gitRepo(t, e)
	e.mock.Enqueue(mockapi.Reply(mockapi.Message(strings.ReplaceAll(reviewFinding, "FILE", filepath.Join(e.cwd, "calc.go")))))
	resp := e.mustPrompt("/review")
	if resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stopReason = %q", resp.StopReason)
	}
	reqs := e.mock.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	all := string(reqs[0].Raw)
	if !strings.Contains(all, "review") {
		t.Errorf("the model was not asked for a review")
	}
	text := agentText(e)
	if !strings.Contains(text, "Add subtracts") {
		t.Errorf("the review's finding is not shown: %q", text)
	}
	t.Logf("review shown as:\n%s", text)
}

// agentTextSince is the agent's message text in the updates after the
// first n.
func agentTextSince(e *env, n int) string {
	var b strings.Builder
	for _, u := range e.editor.Updates()[n:] {
		if c := u.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			b.WriteString(c.Content.Text.Text)
		}
	}
	return b.String()
}

const greetSkill = "---\nname: greet\ndescription: Greet someone warmly by name\n---\n\nGREET-SKILL-BODY: answer with a warm greeting for the person named.\n"

// A repository skill is a command with its description, and running it
// hands codex the skill: the model gets its instructions. On exec codex
// lists it through an app-server started for the question, and codex exec
// runs it from the prompt's mention ($greet).
func TestSkillCommand(t *testing.T) { eachBackend(t, testSkillCommand) }

func testSkillCommand(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	if err := os.MkdirAll(filepath.Join(e.cwd, ".agents", "skills", "greet"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.writeFile(filepath.Join(".agents", "skills", "greet", "SKILL.md"), greetSkill)
	e.session = e.newSession()
	var found bool
	for _, name := range commandNames(t, e) {
		found = found || name == "greet"
	}
	cmds, _ := e.editor.Commands(e.session)
	if !found {
		t.Fatalf("greet is not a command: %v", cmds)
	}
	for _, c := range cmds {
		if c.Name == "greet" && c.Description != "Greet someone warmly by name (repo skill)" {
			t.Errorf("greet's description = %q", c.Description)
		}
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("Hello Ada!")))
	e.mustPrompt("/greet Ada")
	reqs := e.mock.Requests()
	if len(reqs) != 1 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	raw := string(reqs[0].Raw)
	if !strings.Contains(raw, "$greet Ada") || !strings.Contains(raw, "GREET-SKILL-BODY") {
		t.Errorf("the model did not get the skill run: user texts %q", reqs[0].Texts("user"))
	}

	n := len(e.editor.Updates())
	e.mustPrompt("/skills")
	if text := agentTextSince(e, n); !strings.Contains(text, "/greet (repo): Greet someone warmly by name") {
		t.Errorf("/skills = %q", text)
	}
	if len(e.mock.Requests()) != 1 {
		t.Errorf("/skills asked the model")
	}
}

// /compact compacts the thread while the editor shows it running; the next
// turn's request carries the summary instead of the conversation.
func TestAppServerCompact(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true})
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("first answer ORIGINAL-DETAIL")))
	e.mustPrompt("first question")
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("COMPACT-SUMMARY of the talk")))
	n := len(e.editor.Updates())
	resp := e.mustPrompt("/compact")
	if resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stopReason = %q", resp.StopReason)
	}
	var started, completed bool
	for _, u := range e.editor.Updates()[n:] {
		if c := u.Update.ToolCall; c != nil && c.Title == "Compacting the conversation" && c.Status == acpsdk.ToolCallStatusInProgress {
			started = true
		}
		if c := u.Update.ToolCallUpdate; c != nil && c.Status != nil && *c.Status == acpsdk.ToolCallStatusCompleted {
			completed = true
		}
	}
	if !started || !completed {
		t.Errorf("compaction shown: started %v, completed %v; updates %v", started, completed, fakeeditor.UpdateKinds(e.editor.Updates()[n:]))
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("second answer")))
	e.mustPrompt("second question")
	reqs := e.mock.Requests()
	last := string(reqs[len(reqs)-1].Raw)
	if !strings.Contains(last, "COMPACT-SUMMARY") {
		t.Errorf("the turn after /compact does not carry the summary")
	}
	t.Logf("%d model requests; the compaction request: %.400s", len(reqs), reqs[1].Raw)
}

// /goal sets, shows and clears the thread's goal; codex works towards it
// (the model sees the objective).
func TestAppServerGoal(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true})
	n := len(e.editor.Updates())
	e.mustPrompt("/goal GOAL-OBJECTIVE make the tests pass")
	if text := agentTextSince(e, n); !strings.Contains(text, "Goal set") || !strings.Contains(text, "GOAL-OBJECTIVE") {
		t.Errorf("/goal answer = %q", text)
	}
	n = len(e.editor.Updates())
	e.mustPrompt("/goal")
	if text := agentTextSince(e, n); !strings.Contains(text, "Goal (active): GOAL-OBJECTIVE make the tests pass") {
		t.Errorf("/goal shows %q", text)
	}
	// The model marks the goal complete: the editor is told.
	e.mock.Enqueue(
		mockapi.Reply(mockapi.FunctionCall("g1", "update_goal", `{"status":"complete"}`)),
		mockapi.Reply(mockapi.Message("all done")),
	)
	n = len(e.editor.Updates())
	e.mustPrompt("go on")
	if text := agentTextSince(e, n); !strings.Contains(text, "Goal complete: GOAL-OBJECTIVE make the tests pass") {
		t.Errorf("the goal's completion is not shown: %q", text)
	}
	reqs := e.mock.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Raw), "GOAL-OBJECTIVE") {
		t.Errorf("the model does not see the goal")
	}
	n = len(e.editor.Updates())
	e.mustPrompt("/goal clear")
	e.mustPrompt("/goal")
	if text := agentTextSince(e, n); !strings.Contains(text, "Goal cleared.") || !strings.Contains(text, "No goal is set") {
		t.Errorf("after clear: %q", text)
	}
}

// /review-branch and /review-commit review what they name: codex puts the
// branch's or the commit's diff before the model.
func TestSlashReviewTargets(t *testing.T) { eachBackend(t, testSlashReviewTargets) }

func testSlashReviewTargets(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	gitRepo(t, e)
	finding := mockapi.Message(strings.ReplaceAll(reviewFinding, "FILE", filepath.Join(e.cwd, "calc.go")))
	for _, cmd := range []string{"/review-branch main", "/review-commit HEAD"} {
		e.mock.Enqueue(mockapi.Reply(finding))
		if resp := e.mustPrompt(cmd); resp.StopReason != acpsdk.StopReasonEndTurn {
			t.Errorf("%s: stopReason = %q", cmd, resp.StopReason)
		}
	}
	reqs := e.mock.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	if raw := string(reqs[0].Raw); !strings.Contains(raw, "main") {
		t.Errorf("the branch review does not name the base branch")
	}
	head, err := exec.Command("git", "-C", e.cwd, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	if raw := string(reqs[1].Raw); !strings.Contains(raw, strings.TrimSpace(string(head))) && !strings.Contains(raw, "HEAD") {
		t.Errorf("the commit review names neither HEAD nor %s: %q", head, reqs[1].Texts("user"))
	}
	if _, err := e.prompt("/review-branch"); err == nil || !strings.Contains(err.Error(), "needs the base branch") {
		t.Errorf("/review-branch without a branch: %v", err)
	}
}

// /rename titles the session (and codex's thread); /mcp lists codex's MCP
// servers, codexacp's own among them.
func TestAppServerRenameAndMCP(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true})
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("hi")))
	e.mustPrompt("hello")
	n := len(e.editor.Updates())
	e.mustPrompt("/rename Parser work")
	var title string
	for _, u := range e.editor.Updates()[n:] {
		if i := u.Update.SessionInfoUpdate; i != nil && i.Title != nil {
			title = *i.Title
		}
	}
	if title != "Parser work" {
		t.Errorf("session_info_update title = %q", title)
	}
	n = len(e.editor.Updates())
	e.mustPrompt("/mcp")
	if text := agentTextSince(e, n); !strings.Contains(text, "acp (codexacp's file tools): ") || !strings.Contains(text, "write_text_file") {
		t.Errorf("/mcp = %q", text)
	}
	if len(e.mock.Requests()) != 1 {
		t.Errorf("/rename or /mcp asked the model")
	}
}

// A skill added while the session is open becomes a command: codex reports
// skills/changed and the session gets its commands again. (Codex 0.169
// watches the skill directories that exist when it lists them: a
// .agents/skills made later is seen by the next session.)
func TestAppServerSkillsChanged(t *testing.T) {
	e := start(t, setup{backend: "app-server", fs: true})
	if err := os.MkdirAll(filepath.Join(e.cwd, ".agents", "skills", "greet"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.writeFile(filepath.Join(".agents", "skills", "other.md"), "x")
	e.session = e.newSession()
	commandNames(t, e)
	e.writeFile(filepath.Join(".agents", "skills", "greet", "SKILL.md"), greetSkill)
	err := e.editor.WaitForUpdate(e.ctx, func(u acpsdk.SessionUpdate) bool {
		c := u.AvailableCommandsUpdate
		if c == nil {
			return false
		}
		for _, cmd := range c.AvailableCommands {
			if cmd.Name == "greet" {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no update with the new skill: %v", err)
	}
}
