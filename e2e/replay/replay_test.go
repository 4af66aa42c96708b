package replay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codexacp/codexacp/e2e/replay"
	"github.com/codexacp/codexacp/internal/acpschema"
	"github.com/codexacp/codexacp/internal/stress"
	"github.com/codexacp/codexacp/internal/testkit"
	"github.com/codexacp/codexacp/record"
)

// corpusDir holds the transcripts recorded from the e2e suite.
const corpusDir = "../testdata/transcripts"

// minCorpus is the corpus size the project promises (issue 6), and
// minAppServerCorpus how many of its transcripts are of the app-server
// backend (issue 14).
const (
	minCorpus          = 15
	minAppServerCorpus = 8
)

var opts replay.Options

// TestMain builds the agent and the fake codex once (linked again only
// when they changed: testkit.BuildCommands), and runs more replays at once
// than there are CPUs unless -parallel says otherwise: a replay's processes
// mostly wait for one another (one replay keeps about a third of a CPU
// busy), so two at a time on two cores left the machine idle. Every test
// that replays is parallel at the top level too: one after another, each
// variant test waited for the last replays of the one before it.
func TestMain(m *testing.M) {
	flag.Parse()
	parallel := false
	flag.Visit(func(f *flag.Flag) { parallel = parallel || f.Name == "test.parallel" })
	if !parallel {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
	dir, err := os.MkdirTemp("", "codexacp-replay-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins, err := testkit.BuildCommands(dir, "github.com/codexacp/codexacp/cmd/codexacp", "github.com/codexacp/codexacp/e2e/fakecodex")
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the agent and the fake codex: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	opts = replay.Options{Agent: bins[0], FakeCodex: bins[1]}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func corpus(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < minCorpus {
		t.Fatalf("the corpus has %d transcripts, want at least %d (record it: see docs/replay.md)", len(files), minCorpus)
	}
	appServer := 0
	for _, f := range files {
		if recordedBackend(t, f) == record.BackendAppServer {
			appServer++
		}
	}
	if appServer < minAppServerCorpus {
		t.Fatalf("the corpus has %d transcripts of the app-server backend, want at least %d", appServer, minAppServerCorpus)
	}
	return files
}

// recordedBackend is the backend its start entry (the first line) says
// the transcript at path was recorded on; the replay reads the rest.
func recordedBackend(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first, err := bufio.NewReader(f).ReadBytes('\n')
	var start struct {
		Kind    string `json:"kind"`
		Backend string `json:"backend"`
	}
	if err != nil || json.Unmarshal(first, &start) != nil || start.Kind != record.KindStart {
		t.Fatalf("%s does not start with a start entry (%v)", path, err)
	}
	return start.Backend
}

// TestCorpus replays every transcript of the corpus against the agent and
// the fake codex.
func TestCorpus(t *testing.T) {
	t.Parallel()
	replayEach(t, corpus(t))
}

// replayEach replays each transcript in a parallel subtest named after its
// file: the replay must match the recording and every agent message must
// be valid ACP.
func replayEach(t *testing.T, paths []string) {
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".ndjson")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := replayFile(t, path)
			if !res.Match() {
				t.Errorf("replay of %s does not match the recording", path)
			}
			for _, raw := range res.Raw {
				if err := acpschema.ValidateMessage(raw); err != nil {
					t.Errorf("agent message violates the ACP schema: %v\n%s", err, raw)
				}
			}
			t.Logf("replayed %d agent messages in %v", len(res.Got), res.Elapsed.Round(time.Millisecond))
		})
	}
}

// replayFile replays path and reports how it went wrong, if it did.
func replayFile(t *testing.T, path string) *replay.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := replay.Run(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Match() {
		t.Logf("%s", res.Report())
		t.Logf("agent stderr:\n%s", res.Stderr)
	}
	return res
}

// TestAlteredTranscriptFails replays transcripts altered on purpose: the
// replay must fail and the diff must show what differs.
func TestAlteredTranscriptFails(t *testing.T) {
	t.Parallel()
	const (
		exec      = corpusDir + "/TestHelloTurn.ndjson"
		appServer = corpusDir + "/TestHelloTurn.app-server.ndjson"
	)
	type altered struct {
		name   string
		source string
		alter  func(e *record.Entry) bool // false drops the entry
		inDiff []string
	}
	tests := []altered{
		{"changed text", exec, agentMessages(func(out []byte) []byte {
			return bytes.ReplaceAll(out, []byte(`Hello from the mock model`), []byte(`Hello from the recording`))
		}), []string{`-        "text": "Hello from the recording",`, `+        "text": "Hello from the mock model",`}},
		{"missing message", exec, agentMessages(func(out []byte) []byte {
			if bytes.Contains(out, []byte("agent_thought_chunk")) {
				return nil
			}
			return out
			// The replay closes the agent's input where the shorter recording
			// did, so it also shows the turn cancelled.
		}), []string{`+        "text": "Thinking about a greeting",`, "(7 recorded, "}},
		{"app-server: changed text", appServer, agentMessages(func(out []byte) []byte {
			return bytes.ReplaceAll(out, []byte(`"text":"Hello fr"`), []byte(`"text":"Hullo fr"`))
		}), []string{`-        "text": "Hullo fr",`, `+        "text": "Hello fr",`}},
		{"app-server: the agent sent another prompt", appServer, func(e *record.Entry) bool {
			// As if the agent had sent codex another prompt when recorded:
			// the fake answers the live turn/start with an error, and the
			// prompt fails with the reason.
			if e.Kind == record.KindAppServer && e.Dir == record.DirOut && bytes.Contains(e.Msg, []byte(`"turn/start"`)) {
				e.Msg = bytes.ReplaceAll(e.Msg, []byte(`"say hello"`), []byte(`"say goodbye"`))
			}
			return true
		}, []string{`turn/start #1: recorded input [{\"text\":\"say goodbye\",\"type\":\"text\"}], got [{\"text\":\"say hello\",\"type\":\"text\"}]`}},
		{"app-server: codex said something else", appServer, func(e *record.Entry) bool {
			if e.Kind == record.KindAppServer && e.Dir == record.DirIn {
				e.Msg = bytes.ReplaceAll(e.Msg, []byte(`"delta":"Hello fr"`), []byte(`"delta":"Howdy fr"`))
			}
			return true
		}, []string{`-        "text": "Hello fr",`, `+        "text": "Howdy fr",`}},
		{"app-server: the agent steered another prompt", corpusDir + "/TestAppServerSteerReachesRunningTurn.app-server.ndjson", func(e *record.Entry) bool {
			// As if the agent had steered other text into the running turn
			// when recorded: the fake refuses the live turn/steer, the
			// agent queues the prompt as a turn of its own, and the fake
			// refuses that turn/start too (the recording's next turn is
			// another prompt's).
			if e.Kind == record.KindAppServer && e.Dir == record.DirOut && bytes.Contains(e.Msg, []byte(`"turn/steer"`)) {
				e.Msg = bytes.ReplaceAll(e.Msg, []byte(`"also mention the tests"`), []byte(`"also mention the docs"`))
			}
			return true
		}, []string{`turn/start #2: recorded input [{\"text\":\"third\",\"type\":\"text\"}], got [{\"text\":\"also mention the tests\",\"type\":\"text\"}]`}},
		{"app-server: the agent named the thread otherwise", corpusDir + "/TestAppServerRenameAndMCP.app-server.ndjson", func(e *record.Entry) bool {
			// As if /rename had given codex's thread another name when
			// recorded: the fake refuses the live thread/name/set.
			if e.Kind == record.KindAppServer && e.Dir == record.DirOut && bytes.Contains(e.Msg, []byte(`"thread/name/set"`)) {
				e.Msg = bytes.ReplaceAll(e.Msg, []byte(`"Parser work"`), []byte(`"Lexer work"`))
			}
			return true
		}, []string{`thread/name/set #1: recorded name \"Lexer work\", got \"Parser work\"`}},
		{"the user's settings not recorded", corpusDir + "/TestUserSandboxSettingsKept.app-server.ndjson", func(e *record.Entry) bool {
			// As if the recorded agent had read no settings of the user:
			// the replayed one offers the presets alone.
			return e.Kind != record.KindUserConfig
		}, []string{`-      "currentModeId": "custom"`, `+      "currentModeId": "ask"`}},
		{"exec: other writable roots", corpusDir + "/TestAdditionalDirectoryEdits.ndjson", func(e *record.Entry) bool {
			// As if the agent had given codex other writable roots when
			// recorded: the fake refuses the run.
			if e.Kind == record.KindCodexStart {
				for i, a := range e.Args {
					e.Args[i] = strings.ReplaceAll(a, "/outside-1\"]", "/elsewhere\"]")
				}
			}
			return true
		}, []string{`recorded sandbox and approval settings`}},
	}
	tests = quick(t, tests, func(tt altered) string { return tt.name },
		"changed text", "missing message", "app-server: the agent sent another prompt", "exec: other writable roots")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			altered := rewriteTranscript(t, tt.source, func(entries []record.Entry) []record.Entry {
				var kept []record.Entry
				for _, e := range entries {
					if tt.alter(&e) {
						kept = append(kept, e)
					}
				}
				return kept
			})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := replay.Run(ctx, altered, opts)
			if err != nil {
				t.Fatal(err)
			}
			endedWithoutWaiting(t, res)
			if res.Match() {
				t.Fatal("the altered transcript replayed as a match")
			}
			diff := replay.Diff(res.Want, res.Got)
			for _, s := range append(tt.inDiff, "--- recorded", "+++ replayed") {
				if !strings.Contains(diff, s) {
					t.Errorf("diff lacks %q:\n%s", s, diff)
				}
			}
		})
	}
}

// endedWithoutWaiting fails when the replay of an altered transcript
// waited out a step or the agent's exit: the replay is to end as soon as
// the agent went another way than recorded and answered the editor, with
// no wait for what the recording has next (which is not coming).
func endedWithoutWaiting(t *testing.T, res *replay.Result) {
	t.Helper()
	if strings.Contains(res.Incomplete, "waited ") || strings.Contains(res.Incomplete, "did not exit") {
		t.Errorf("the replay waited instead of ending once the agent went another way: %s", res.Incomplete)
	}
}

// TestAlteredToolResultFails replays transcripts whose recorded result of a
// read_text_file call was altered: the agent's messages to the editor do
// not show a file's content (rawOutput has its size and hash), so only the
// fake codex, comparing what the model received with the recording, sees
// the difference — and the replay must fail and show both results.
func TestAlteredToolResultFails(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"TestAllSevenToolsInAutoMode", "TestAllSevenToolsInAutoMode.app-server"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			altered := 0
			path := rewriteTranscript(t, filepath.Join(corpusDir, name+".ndjson"), func(entries []record.Entry) []record.Entry {
				for i := range entries {
					e := &entries[i]
					if e.Kind == record.KindMCPResult && e.Tool == "read_text_file" && altered == 0 {
						e.Result = bytes.Replace(e.Result, []byte(`"alpha\nbeta\ngamma\n"`), []byte(`"alpha\nBETA\ngamma\n"`), 1)
						altered++
					}
				}
				return entries
			})
			if altered != 1 {
				t.Fatal("no read_text_file result with the expected content in the transcript")
			}
			res, err := replay.Run(context.Background(), path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Match() {
				t.Fatal("a transcript with an altered tool result replayed as a match")
			}
			if d := replay.Diff(res.Want, res.Got); d != "" || res.Incomplete != "" {
				t.Errorf("the agent's messages differ too (want only the tool result to):\n%s", res.Report())
			}
			if len(res.ToolResults) != 1 {
				t.Fatalf("%d tool results differ, want 1:\n%s", len(res.ToolResults), strings.Join(res.ToolResults, "\n"))
			}
			report := res.Report()
			for _, s := range []string{"the result of read_text_file", "recorded:", `"content": "alpha\nBETA\ngamma\n"`, "replayed:", `"content": "alpha\nbeta\ngamma\n"`} {
				if !strings.Contains(report, s) {
					t.Errorf("report lacks %q:\n%s", s, report)
				}
			}
		})
	}
}

// quick keeps, in the quick loop, the cases of a variant test named in
// names: each variant replays a chosen few transcripts that show its point
// (both backends where it differs), and every case with CODEXACP_STRESS=1
// (CI, .ci/run). The plain replay of the whole corpus (TestCorpus) always
// runs: it is the safety net.
func quick[T any](t *testing.T, cases []T, name func(T) string, names ...string) []T {
	t.Helper()
	if stress.Full() {
		return cases
	}
	var kept []T
	for _, c := range cases {
		if slices.Contains(names, name(c)) {
			kept = append(kept, c)
		}
	}
	if len(kept) != len(names) {
		t.Fatalf("the quick cases %q are not all among the cases", names)
	}
	t.Logf("quick loop: %d of %d cases (all with %s=1)", len(kept), len(cases), stress.Env)
	return kept
}

func itself(s string) string { return s }

// agentMessages is an entry filter that puts each recorded agent message
// through alter (nil drops it).
func agentMessages(alter func([]byte) []byte) func(e *record.Entry) bool {
	return func(e *record.Entry) bool {
		if e.Kind == record.KindACP && e.Dir == record.DirOut && e.Msg != nil {
			e.Msg = alter(e.Msg)
			return e.Msg != nil
		}
		return true
	}
}

// rewriteTranscript writes a copy of path with its entries rewritten.
func rewriteTranscript(t *testing.T, path string, rewrite func([]record.Entry) []record.Entry) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, err := record.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := record.Write(&buf, rewrite(entries)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLoadReadsTheStoredFiles replays the session/load transcript with
// its stored files (the session record, codex's rollout) missing or
// altered: the agent's real list and load read what the replay recreated,
// so the replay fails and the diff shows the difference.
func TestLoadReadsTheStoredFiles(t *testing.T) {
	t.Parallel()
	const source = corpusDir + "/TestSessionLoadAfterRestart.ndjson"
	tests := []struct {
		name   string
		alter  func(e *record.Entry) bool // false drops the entry
		inDiff []string
	}{
		{"no stored files", func(e *record.Entry) bool { return e.Kind != record.KindStored },
			[]string{`+    "sessions": []`, `+    "message": "Resource not found: unknown session \"sess_1\""`}},
		{"another rollout", func(e *record.Entry) bool {
			if e.Kind == record.KindStored && e.Content != nil && strings.Contains(e.Path, "rollout-") {
				c := strings.ReplaceAll(*e.Content, "the answer is 42", "the answer is 43")
				e.Content = &c
			}
			return true
		}, []string{`-        "text": "the answer is 42",`, `+        "text": "the answer is 43",`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			altered := rewriteTranscript(t, source, func(entries []record.Entry) []record.Entry {
				var kept []record.Entry
				for _, e := range entries {
					if tt.alter(&e) {
						kept = append(kept, e)
					}
				}
				return kept
			})
			res, err := replay.Run(context.Background(), altered, opts)
			if err != nil {
				t.Fatal(err)
			}
			endedWithoutWaiting(t, res)
			if res.Match() {
				t.Fatal("the altered transcript replayed as a match")
			}
			diff := replay.Diff(res.Want, res.Got)
			for _, s := range tt.inDiff {
				if !strings.Contains(diff, s) {
					t.Errorf("diff lacks %q:\n%s", s, diff)
				}
			}
		})
	}
}

// TestReplayWithoutRoot replays transcripts as a user's recording comes:
// no root in the header, so the first session's cwd (new or loaded) is
// mapped.
func TestReplayWithoutRoot(t *testing.T) {
	t.Parallel()
	names := []string{"TestEditGoesThroughEditorBuffer", "TestClientWithoutFSWritesDiskAtomically", "TestSessionLoadAfterRestart",
		"TestEditGoesThroughEditorBuffer.app-server", "TestSessionLoadAfterRestart.app-server"}
	// A new session on one backend, a loaded one on the other.
	for _, name := range quick(t, names, itself, "TestSessionLoadAfterRestart", "TestEditGoesThroughEditorBuffer.app-server") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := rewriteTranscript(t, filepath.Join(corpusDir, name+".ndjson"), func(entries []record.Entry) []record.Entry {
				entries[0].Root = ""
				return entries
			})
			if res := replayFile(t, path); !res.Match() {
				t.Errorf("replay without a root does not match the recording")
			}
		})
	}
}

// BenchmarkReplayCorpus replays the whole corpus once per iteration, one
// transcript after another: the time a replay run costs.
func BenchmarkReplayCorpus(b *testing.B) {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.ndjson"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no corpus: %v", err)
	}
	ctx := context.Background()
	for b.Loop() {
		for _, path := range files {
			res, err := replay.Run(ctx, path, opts)
			if err != nil {
				b.Fatal(err)
			}
			if !res.Match() {
				b.Fatalf("%s does not match:\n%s", path, res.Report())
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(len(files)), "ms/transcript")
}

var hex64 = regexp.MustCompile(`\b[0-9a-f]{64}\b`)

// TestRecordingOfAReplayReplays records the agent (--record) while it
// replays a transcript, then replays that new recording: the recorder in the
// agent binary captures everything a replay needs, with no codex involved.
func TestRecordingOfAReplayReplays(t *testing.T) {
	t.Parallel()
	names := []string{"TestHelloTurn", "TestEditGoesThroughEditorBuffer", "TestAllSevenToolsInAutoMode", "TestCancelMidStream", "TestSessionLoadAfterRestart",
		"TestHelloTurn.app-server", "TestEditGoesThroughEditorBuffer.app-server", "TestAppServerCommandApproval.allowed.app-server",
		"TestCancelMidStream.app-server", "TestAppServerSessionsShareOneProcess.app-server"}
	// The file tools and a load on exec; an approval and a cancel on the
	// app-server.
	// The cases run one after another (each replays twice, the second
	// replay waiting for the first): the test holds one replay's place from
	// the start rather than queue its cases behind the corpus's, where
	// their second replays made a tail.
	for _, name := range quick(t, names, itself, "TestAllSevenToolsInAutoMode", "TestSessionLoadAfterRestart",
		"TestAppServerCommandApproval.allowed.app-server", "TestCancelMidStream.app-server") {
		t.Run(name, func(t *testing.T) {
			again := filepath.Join(t.TempDir(), name+".ndjson")
			o := opts
			o.AgentArgs = []string{"--record", again}
			res, err := replay.Run(context.Background(), filepath.Join(corpusDir, name+".ndjson"), o)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Match() {
				t.Fatalf("the replay being recorded does not match:\n%s", res.Report())
			}
			// The session's MCP token (64 hex digits, random) is not in the
			// new recording: every such string there is a content hash the
			// original has too.
			orig, _ := os.ReadFile(filepath.Join(corpusDir, name+".ndjson"))
			data, err := os.ReadFile(again)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hex64.FindAll(data, -1) {
				if !bytes.Contains(orig, h) {
					t.Errorf("the new recording holds an unknown 64-digit hex string (the token?): %s", h)
				}
			}
			if strings.HasSuffix(name, ".app-server") {
				// The token went to codex in thread/start's config: in the
				// relay's environment, or as an HTTP header where the agent
				// has no relay (mcp.Host.Relay).
				if !bytes.Contains(data, []byte(`"CODEXACP_MCP_TOKEN":"[REDACTED]"`)) &&
					!bytes.Contains(data, []byte(`"http_headers":{"Authorization":"[REDACTED]"}`)) {
					t.Errorf("the app-server's thread config is not recorded with its token redacted")
				}
			} else if !bytes.Contains(data, []byte(`"CODEXACP_MCP_TOKEN"`)) {
				t.Errorf("the token's variable name is not recorded")
			}
			if res2 := replayFile(t, again); !res2.Match() {
				t.Errorf("the recording of a replay does not replay")
			} else if len(res2.Got) != len(res.Got) {
				t.Errorf("%d messages replayed from the new recording, %d from the original", len(res2.Got), len(res.Got))
			}
		})
	}
}
