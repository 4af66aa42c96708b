package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/record"
)

// The replay corpus (e2e/testdata/transcripts) is recorded from these tests,
// real codex and the mock model, when CODEXACP_RECORD_CORPUS=1:
//
//	CODEXACP_RECORD_CORPUS=1 go test -count=1 ./e2e/
//
// (`just record-corpus`). Each test writes <TestName>.ndjson after it
// passed; e2e/replay replays them with a fake codex (docs/replay.md).
const envRecordCorpus = "CODEXACP_RECORD_CORPUS"

// corpusDir is where recorded transcripts go, relative to this package.
const corpusDir = "testdata/transcripts"

// corpusRoot replaces each test's temporary directory in the corpus, so
// that transcripts name no path of the machine they were recorded on and
// re-recording changes only what changed.
const corpusRoot = "/replay"

// corpusTests are the tests whose sessions make up the corpus, each run
// once per backend (eachBackend): the exec session of X is saved as
// X.ndjson, the app-server session as X.app-server.ndjson. Left out:
// TestCodexNotFound (no codex run to replay) and benchmarks.
var corpusTests = map[string]bool{
	"TestHelloTurn":                           true,
	"TestShellCommandTurn":                    true,
	"TestResumeContinuesThread":               true,
	"TestCancelMidStream":                     true,
	"TestCancelMidCommandLeavesNoProcesses":   true,
	"TestModelHTTP400FailsPrompt":             true,
	"TestEditGoesThroughEditorBuffer":         true,
	"TestAllSevenToolsInAutoMode":             true,
	"TestMultiEditErrorLeavesFileUnchanged":   true,
	"TestPermissionRejectWritesNothing":       true,
	"TestPermissionAllowAlwaysAsksOnce":       true,
	"TestReadOnlyModeRefusesWrites":           true,
	"TestClientWithoutFSWritesDiskAtomically": true,
	"TestClientFSErrorReachesModel":           true,
	"TestWriteOutsideWorkspaceRefused":        true,
	"TestCreatedFileDiffHasNoOldText":         true,
	"TestImagePrompt":                         true,
	"TestFastMode":                            true,
	"TestSlashStatus":                         true,
	"TestSlashInit":                           true,
	"TestSlashReview":                         true,
	"TestSlashReviewTargets":                  true,
	"TestSlashUnknownReachesModel":            true,
	"TestSkillCommand":                        true,
	"TestConfigOptionsReachTheModel":          true,
	"TestWriteCreatesParentsInAskMode":        true,
	"TestSessionDelete":                       true,
	"TestAdditionalDirectoryEdits":            true,
	"TestUndoToolTurns":                       true,
	"TestUndoAsksAboutUserChange":             true,
}

// appServerCorpusTests are tests of the app-server backend alone (by their
// full names, subtests included), saved as <name with / as .>.app-server.ndjson.
var appServerCorpusTests = map[string]bool{
	"TestAppServerStreamsText":                          true,
	"TestAppServerCommandApproval/allowed":              true,
	"TestAppServerCommandApproval/rejected":             true,
	"TestAppServerCommandApproval/cancelled":            true,
	"TestAppServerAllowAlwaysAsksOnce":                  true,
	"TestAppServerSessionsShareOneProcess":              true,
	"TestAppServerEditorMCPApproval/rejected":           true,
	"TestAppServerEditorMCPApproval/session":            true,
	"TestAppServerEditorMCPApproval/cancelled":          true,
	"TestAppServerEditorMCPApproval/read-only_rejected": true,
	"TestAppServerReadOnlyAsksOnlyForMCPTools":          true,
	"TestAppServerCompact":                              true,
	"TestAppServerGoal":                                 true,
	"TestPlanModeThenImplement/implemented":             true,
	"TestPlanModeThenImplement/kept_planning":           true,
	"TestPlanModeThenImplement/via_the_plan_command":    true,
	"TestPlanModeUserInput/answered":                    true,
	"TestPlanModeUserInput/declined":                    true,
	"TestPlanModeUserInput/elicitation_answered":        true,
	"TestPlanModeUserInput/elicitation_declined":        true,
	"TestPlanModeUserInput/elicitation_own_answer":      true,
	"TestAppServerSearchAndImages":                      true,
	"TestAppServerSteerReachesRunningTurn":              true,
	"TestAppServerSteerAndCancel/steer_then_cancel":     true,
	"TestAppServerSteerAndCancel/cancel_then_prompt":    true,
	"TestSessionFork":                                   true,
	"TestAppServerSubagentVisible":                      true,
	"TestAppServerSubagentCancelled":                    true,
	"TestAppServerRenameAndMCP":                         true,
	"TestDefaultBackendMCPTurn":                         true, // recorded on codex 0.171.0 (issue 25)
}

// execCorpusTests are tests of the exec backend alone, saved as
// <name with / as .>.ndjson.
var execCorpusTests = map[string]bool{
	"TestExecQueuesPromptWhileTurnRuns": true,
	"TestExecRefusedCommandShown":       true,
}

// restartCorpusTests are tests whose corpus transcript is the session of
// their second agent process (env.restart), which lists and loads what the
// first one left in the state directory and codex's home; their first
// process is not recorded. They run once per backend, named as corpusTests.
var restartCorpusTests = map[string]bool{
	"TestSessionLoadAfterRestart": true,
	"TestLoadReplaysToolCalls":    true,
	"TestUserSandboxSettingsKept": true,
}

// appServerSuffix marks the transcripts of app-server sessions.
const appServerSuffix = ".app-server"

// corpusName is the corpus transcript name (without .ndjson) of the
// session of the test called testName, whether its first agent process or
// the restarted one; false when that session is not in the corpus.
func corpusName(testName string, restarted bool) (string, bool) {
	tests := corpusTests
	if restarted {
		tests = restartCorpusTests
	} else if appServerCorpusTests[testName] {
		return strings.ReplaceAll(testName, "/", ".") + appServerSuffix, true
	} else if execCorpusTests[testName] {
		return strings.ReplaceAll(testName, "/", "."), true
	}
	if name, ok := strings.CutSuffix(testName, "/exec"); ok && tests[name] {
		return name, true
	}
	if name, ok := strings.CutSuffix(testName, "/app-server"); ok && tests[name] {
		return name + appServerSuffix, true
	}
	return "", false
}

// recordCorpus returns the agent flags that record the test's session when
// the corpus is being recorded, and arranges for the transcript to be saved
// to the corpus once the agent has exited (cleanups run last-in first-out:
// call it before registering the cleanup that stops the agent). root is
// the test's temporary directory, which holds the workspace and codex's
// home; restarted says whether the agent is the test's second process.
func recordCorpus(t testing.TB, root string, restarted bool) []string {
	name, recorded := corpusName(t.Name(), restarted)
	if os.Getenv(envRecordCorpus) != "1" || !recorded {
		return nil
	}
	f, err := os.CreateTemp("", "codexacp-corpus-*.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Cleanup(func() {
		defer os.Remove(f.Name())
		if t.Failed() || t.Skipped() {
			return
		}
		dst := filepath.Join(corpusDir, name+".ndjson")
		if err := saveCorpusTranscript(f.Name(), dst, root, outsideDirsOf(t)); err != nil {
			t.Errorf("saving the transcript: %v", err)
			return
		}
		t.Logf("recorded %s", dst)
	})
	return []string{"--record", f.Name()}
}

// harnessEnv are variables of the test harness, not of the session (a
// recording run sets them for every agent).
var harnessEnv = map[string]bool{envRecordCorpus: true, "CODEXACP_E2E": true}

// outsideDirs are the directories outside the test's temporary directory
// that outsideDir made, by test name, in the order made.
var outsideDirs = struct {
	sync.Mutex
	byTest map[string][]string
}{byTest: map[string][]string{}}

func noteOutsideDir(t testing.TB, dir string) {
	outsideDirs.Lock()
	defer outsideDirs.Unlock()
	outsideDirs.byTest[t.Name()] = append(outsideDirs.byTest[t.Name()], dir)
}

func outsideDirsOf(t testing.TB) []string {
	outsideDirs.Lock()
	defer outsideDirs.Unlock()
	return outsideDirs.byTest[t.Name()]
}

// saveCorpusTranscript copies a transcript into the corpus with root
// replaced by corpusRoot (also set as the header's root), each directory
// of outside by corpusRoot/outside-<n> (so that the transcript names no
// path of the machine, and a replay, which works under its own root,
// creates the additional directories among them), the home directory by
// /home/user, and only the environment names that matter to codex (not the
// harness's own).
func saveCorpusTranscript(src, dst, root string, outside []string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	data = bytes.ReplaceAll(data, jsonText(root), jsonText(corpusRoot))
	for i, dir := range outside {
		data = record.RebasePaths(data, dir, fmt.Sprintf("%s/outside-%d", corpusRoot, i+1))
	}
	// Shell output can name the recording user's home (a login shell's
	// warnings, say). /root names no one, and is the path codex gives the
	// root of its agent tree (multi_agent_v2 subagents are /root/<task>),
	// which must stay as codex wrote it.
	if home, err := os.UserHomeDir(); err == nil && len(home) > 1 && home != "/root" {
		data = bytes.ReplaceAll(data, jsonText(home+"/"), []byte("/home/user/"))
	}
	entries, err := record.Read(bytes.NewReader(data))
	if err != nil {
		return err
	}
	entries[0].Root = corpusRoot
	// A replay runs no shell command, so the files one made do not change
	// and it shows no shell edits (docs/replay.md): the corpus copy leaves
	// them out.
	entries = slices.DeleteFunc(entries, func(e record.Entry) bool {
		return e.Kind == record.KindACP && e.Dir == record.DirOut && bytes.Contains(e.Msg, []byte(`"toolCallId":"shell-edits-`))
	})
	for i := range entries {
		e := &entries[i]
		var keep []string
		for _, name := range e.Env {
			if (strings.HasPrefix(name, "CODEX") || strings.HasPrefix(name, "OPENAI")) && !harnessEnv[name] {
				keep = append(keep, name)
			}
		}
		e.Env = keep
	}
	var out bytes.Buffer
	if err := record.Write(&out, entries); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, out.Bytes(), 0o644)
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) []byte {
	b, _ := json.Marshal(s)
	return b[1 : len(b)-1]
}

func TestMultiEditErrorLeavesFileUnchanged(t *testing.T) {
	eachBackend(t, testMultiEditErrorLeavesFileUnchanged)
}

func testMultiEditErrorLeavesFileUnchanged(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true, mode: "auto"})
	path := e.writeFile("list.txt", "one\ntwo\nthree\n")
	e.mock.Enqueue(
		mockapi.Reply(acpCall(t, "c_multi", "multi_edit_text_file", map[string]any{"path": path, "edits": []map[string]any{
			{"old_string": "one", "new_string": "ONE"},
			{"old_string": "four", "new_string": "FOUR"},
		}})),
		mockapi.Reply(mockapi.Message("the second edit did not match")),
	)
	if r := e.mustPrompt("uppercase one and four"); r.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("stopReason = %q", r.StopReason)
	}
	out := toolOutput(t, e, "c_multi")
	if !strings.Contains(out, "-32010") || !strings.Contains(out, "Edit 1: String not found: four") {
		t.Errorf("model output = %s", out)
	}
	if _, open := e.editor.Buffer(path); open {
		t.Errorf("a failed multi-edit was written to the editor")
	}
	tools := toolUpdates(e)
	if len(tools) == 0 {
		t.Fatal("no tool updates")
	}
	last := tools[len(tools)-1].ToolCallUpdate
	if last == nil || last.Status == nil || *last.Status != acpsdk.ToolCallStatusFailed {
		t.Errorf("last update = %+v, want failed", tools[len(tools)-1])
	}
}

// TestCorpusName: which sessions the corpus holds, under which names; exec
// transcripts keep the names they always had.
func TestCorpusName(t *testing.T) {
	tests := []struct {
		test      string
		restarted bool
		want      string // "": not recorded
	}{
		{"TestHelloTurn/exec", false, "TestHelloTurn"},
		{"TestHelloTurn/app-server", false, "TestHelloTurn.app-server"},
		{"TestHelloTurn/app-server", true, ""},
		{"TestHelloTurn", false, ""},
		{"TestCodexNotFound/exec", false, ""},
		{"TestSessionLoadAfterRestart/exec", false, ""},
		{"TestSessionLoadAfterRestart/exec", true, "TestSessionLoadAfterRestart"},
		{"TestSessionLoadAfterRestart/app-server", true, "TestSessionLoadAfterRestart.app-server"},
		{"TestAppServerStreamsText", false, "TestAppServerStreamsText.app-server"},
		{"TestAppServerCommandApproval/allowed", false, "TestAppServerCommandApproval.allowed.app-server"},
		{"TestAppServerCommandApproval/allowed", true, ""},
		{"TestAppServerModes/auto", false, ""},
		{"TestExecQueuesPromptWhileTurnRuns", false, "TestExecQueuesPromptWhileTurnRuns"},
		{"TestExecQueuesPromptWhileTurnRuns", true, ""},
	}
	for _, tt := range tests {
		got, ok := corpusName(tt.test, tt.restarted)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("corpusName(%q, %v) = %q, %v; want %q", tt.test, tt.restarted, got, ok, tt.want)
		}
	}
}
