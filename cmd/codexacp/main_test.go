package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codexacp/codexacp/acp"
	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/internal/syncbuf"
)

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		env        map[string]string
		wantPath   string
		wantConfig []string
		wantLevel  string
		wantBack   string // "": app-server, the default
		wantErr    string
	}{
		{name: "defaults", wantLevel: "info"},
		{name: "exec by flag", args: []string{"--backend", "exec"}, wantLevel: "info", wantBack: "exec"},
		{name: "exec by env", env: map[string]string{"CODEXACP_BACKEND": "exec"}, wantLevel: "info", wantBack: "exec"},
		{name: "flag wins over env", args: []string{"--backend", "app-server"}, env: map[string]string{"CODEXACP_BACKEND": "exec"}, wantLevel: "info"},
		{name: "bad backend", args: []string{"--backend", "remote"}, wantErr: "unknown backend"},
		{name: "flags", args: []string{"--codex-path", "/opt/codex", "-c", `model="gpt-5.5"`, "-c", "x=1", "--log-level", "debug"},
			wantPath: "/opt/codex", wantConfig: []string{`model="gpt-5.5"`, "x=1"}, wantLevel: "debug"},
		{name: "env", env: map[string]string{"CODEXACP_CODEX_PATH": "/env/codex", "CODEXACP_CONFIG": "a=1\n\n b=2 \n", "CODEXACP_LOG_LEVEL": "warn"},
			wantPath: "/env/codex", wantConfig: []string{"a=1", "b=2"}, wantLevel: "warn"},
		{name: "flags win over env", args: []string{"--codex-path", "/flag", "-c", "a=3"}, env: map[string]string{"CODEXACP_CODEX_PATH": "/env", "CODEXACP_CONFIG": "a=1"},
			wantPath: "/flag", wantConfig: []string{"a=1", "a=3"}, wantLevel: "info"},
		{name: "bad -c", args: []string{"-c", "novalue"}, wantErr: "expected key=value"},
		{name: "bad env config", env: map[string]string{"CODEXACP_CONFIG": "novalue"}, wantErr: "CODEXACP_CONFIG"},
		{name: "stray argument", args: []string{"serve"}, wantErr: "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"CODEXACP_CODEX_PATH", "CODEXACP_CONFIG", "CODEXACP_LOG_LEVEL", "CODEXACP_STATE_DIR", "CODEXACP_BACKEND"} {
				t.Setenv(k, tc.env[k])
			}
			var stderr bytes.Buffer
			o, err := parseFlags(tc.args, &stderr)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.codexPath != tc.wantPath || strings.Join(o.config, "|") != strings.Join(tc.wantConfig, "|") || o.logLevel != tc.wantLevel {
				t.Errorf("got path %q config %q level %q", o.codexPath, o.config, o.logLevel)
			}
			if want := cmp.Or(tc.wantBack, "app-server"); o.backend != want {
				t.Errorf("backend %q, want %q", o.backend, want)
			}
		})
	}
}

func TestStateDirDefault(t *testing.T) {
	t.Setenv("CODEXACP_STATE_DIR", "")
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	o, err := parseFlags(nil, io.Discard)
	if err != nil || o.stateDir != "/xdg/state/codexacp" {
		t.Errorf("state dir = %q, %v", o.stateDir, err)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if o, _ := parseFlags(nil, io.Discard); o.stateDir != "/home/u/.local/state/codexacp" {
		t.Errorf("state dir = %q", o.stateDir)
	}
	t.Setenv("CODEXACP_STATE_DIR", "/env/state")
	if o, _ := parseFlags(nil, io.Discard); o.stateDir != "/env/state" {
		t.Errorf("state dir = %q", o.stateDir)
	}
	if o, _ := parseFlags([]string{"--state-dir", ""}, io.Discard); o.stateDir != "" {
		t.Errorf("--state-dir '' = %q", o.stateDir)
	}
}

func TestRunVersionAndBadLevel(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run([]string{"--version"}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "codexacp ") {
		t.Errorf("version output = %q", stdout.String())
	}
	stdout.Reset()
	err := run([]string{"--log-level", "loud"}, strings.NewReader(""), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Errorf("err = %v", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("wrote to stdout: %q", stdout.String())
	}
}

// With stdin closed at once the agent serves nothing and exits cleanly,
// writing nothing to stdout (logs go to stderr).
func TestRunEmptyInput(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var stdout bytes.Buffer
	var stderr syncbuf.Buffer // the SDK may still log "connection closed" as run returns
	if err := run([]string{"--codex-path", "/nonexistent/codex"}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", stdout.String())
	}
	if !strings.Contains(stderr.String(), "codex not available") {
		t.Errorf("stderr lacks the missing-codex log: %q", stderr.String())
	}
}

// fakeCodex writes a script answering what doctor asks codex, as the
// newest tested codex.
func fakeCodex(t *testing.T) string { return fakeCodexVersion(t, codex.NewestTested) }

// fakeCodexVersion is fakeCodex reporting version.
func fakeCodexVersion(t *testing.T, version string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "codex")
	script := `#!/bin/sh
[ -n "$FAKE_CODEX_CALLS" ] && echo "$*" >>"$FAKE_CODEX_CALLS"
case "$*" in
  --version) echo "codex-cli ` + version + `" ;;
  "exec --help") echo "Run Codex non-interactively" ;;
  app-server|"app-server "*) # answers initialize, then waits for stdin to close
    read -r line
    id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
    printf '{"id":%s,"result":{"userAgent":"fake"}}\n' "$id"
    cat >/dev/null ;;
  "debug models --bundled") echo '{"models":[{"slug":"m1","context_window":1000,"priority":1,"visibility":"list","apply_patch_tool_type":"freeform"}]}' ;;
  "login status"*) # logged in unless FAKE_CODEX_LOGIN says otherwise
    case "$FAKE_CODEX_LOGIN" in
      none) echo "Not logged in" >&2; exit 1 ;;
      broken) echo "error: cannot read auth.json" >&2; exit 2 ;;
      *) echo "Logged in using ChatGPT" >&2 ;;
    esac ;;
  *) exit 2 ;;
esac
`
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDoctor(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	state := t.TempDir()
	var out bytes.Buffer
	err := run([]string{"doctor", "--codex-path", fakeCodex(t), "--state-dir", state}, strings.NewReader(""), &out, io.Discard)
	if err != nil {
		t.Fatalf("doctor: %v\n%s", err, out.String())
	}
	for _, want := range []string{"ok   codex", "codex-cli " + codex.NewestTested, "ok   model catalog", "without apply_patch",
		"ok   model         codex's default, context window 1000 tokens", "ok   state dir     " + filepath.Join(state, "sessions"), "ok   tool server   listens on http://127.0.0.1:",
		"ok   exec          codex exec runs\n", "ok   app-server    codex app-server answered in ", " ms (selected)\n",
		"ok   sign-in       codex is logged in (codex login status)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "warn") {
		t.Errorf("doctor warns about a tested codex:\n%s", out.String())
	}

	out.Reset()
	err = run([]string{"doctor", "--codex-path", filepath.Join(t.TempDir(), "missing"), "--state-dir", ""}, strings.NewReader(""), &out, io.Discard)
	if err == nil || !strings.Contains(out.String(), "FAIL codex") || !strings.Contains(out.String(), "npm i -g @openai/codex") {
		t.Errorf("missing codex: err %v, output:\n%s", err, out.String())
	}
}

// TestDoctorCodexOutsideTestedRange: doctor says when codex is older or
// newer than any tested, and still passes (codexacp may well work).
func TestDoctorCodexOutsideTestedRange(t *testing.T) {
	for _, tt := range []struct{ version, want string }{
		{"0.99.1", "warn codex version codex 0.99.1 is older than any codex codexacp was tested with (" + codex.TestedRange() + "): app-server features may be missing"},
		{"99.0.0", "warn codex version codex 99.0.0 is newer than any codex codexacp was tested with (" + codex.TestedRange() + "): it is untested; if something goes wrong, please report it"},
	} {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		var out bytes.Buffer
		err := run([]string{"doctor", "--codex-path", fakeCodexVersion(t, tt.version), "--state-dir", ""}, strings.NewReader(""), &out, io.Discard)
		if err != nil {
			t.Errorf("codex %s: doctor: %v\n%s", tt.version, err, out.String())
		}
		if !strings.Contains(out.String(), tt.want) || !strings.Contains(out.String(), "ok   codex ") {
			t.Errorf("codex %s: doctor output lacks %q:\n%s", tt.version, tt.want, out.String())
		}
	}
}

// TestCodexVersionLogged: the agent learns codex's version at start,
// without being asked, and logs a warning when it is outside the tested
// range (nothing for a tested one).
func TestCodexVersionLogged(t *testing.T) {
	for _, tt := range []struct{ version, want string }{
		{"0.99.1", "codex 0.99.1 is older than any codex codexacp was tested with"},
		{"99.0.0", "codex 99.0.0 is newer than any codex codexacp was tested with"},
	} {
		var logs syncbuf.Buffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		// Not waited for: it must run by itself. 30 s only keeps a failure from
		// hanging; it bounds no speed.
		prepareCodexVersion(context.Background(), nil, log, fakeCodexVersion(t, tt.version), noCatalog)
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(logs.String(), tt.want) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if !strings.Contains(logs.String(), tt.want) || !strings.Contains(logs.String(), "level=WARN") {
			t.Errorf("codex %s: log lacks %q:\n%s", tt.version, tt.want, logs.String())
		}
	}
	var logs syncbuf.Buffer
	v := prepareCodexVersion(context.Background(), nil, slog.New(slog.NewTextHandler(&logs, nil)), fakeCodex(t), noCatalog)()
	if v != codex.NewestTested || logs.String() != "" {
		t.Errorf("tested codex: version %q, log %q", v, logs.String())
	}
}

func noCatalog() acp.ModelInfo { return acp.ModelInfo{} }

// TestCodexVersionFromCatalog: a model catalog made by an earlier process
// names the codex version it was made for, and the agent takes the
// version from it: no `codex --version` starts beside the agent's first
// answers (here codex cannot run at all), and the log still warns.
func TestCodexVersionFromCatalog(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	catalog := func() acp.ModelInfo {
		return acp.ModelInfo{Catalog: filepath.Join(t.TempDir(), "model-catalog-0.99.1.json")}
	}
	missing := filepath.Join(t.TempDir(), "no-codex")
	if v := prepareCodexVersion(context.Background(), nil, log, missing, catalog)(); v != "0.99.1" {
		t.Errorf("version = %q, want the catalog's 0.99.1; log:\n%s", v, logs.String())
	}
	if want := "codex 0.99.1 is older than any codex codexacp was tested with"; !strings.Contains(logs.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, logs.String())
	}
}

// TestDoctorLogsAtLogLevel: doctor's advice (--log-level debug) holds: what
// the agent logs while doctor checks goes to stderr at --log-level, the
// checks themselves to stdout.
func TestDoctorLogsAtLogLevel(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	// A codex whose catalog cannot be built (debug models fails).
	p := filepath.Join(t.TempDir(), "codex")
	script, err := os.ReadFile(fakeCodex(t))
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(script), `"debug models --bundled") echo`, `"debug models --bundled") echo "catalog exploded" >&2; exit 3; echo`, 1)
	if err := os.WriteFile(p, []byte(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	doctorRun := func(level string) (stdout, stderr string) {
		t.Helper()
		var out bytes.Buffer
		var logs syncbuf.Buffer // the app-server's reader may log concurrently
		args := []string{"doctor", "--codex-path", p, "--state-dir", ""}
		if level != "" {
			args = append(args, "--log-level", level)
		}
		run(args, strings.NewReader(""), &out, &logs)
		return out.String(), logs.String()
	}

	out, logs := doctorRun("debug")
	if !strings.Contains(out, "FAIL model catalog") || !strings.Contains(out, "the log on stderr says why") {
		t.Errorf("doctor output:\n%s", out)
	}
	for _, want := range []string{"level=WARN", "cannot build the model catalog", "catalog exploded", "level=DEBUG"} {
		if !strings.Contains(logs, want) {
			t.Errorf("debug log lacks %q:\n%s", want, logs)
		}
	}
	if strings.Contains(out, "level=") {
		t.Errorf("logs went to stdout:\n%s", out)
	}

	// The default level (info) shows the warning but no debug lines.
	if _, logs := doctorRun(""); !strings.Contains(logs, "cannot build the model catalog") || strings.Contains(logs, "level=DEBUG") {
		t.Errorf("info log:\n%s", logs)
	}
	if _, logs := doctorRun("error"); logs != "" {
		t.Errorf("error-level log has lines:\n%s", logs)
	}
	var out2 bytes.Buffer
	if err := run([]string{"doctor", "--log-level", "loud"}, strings.NewReader(""), &out2, io.Discard); err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Errorf("doctor with a bad level: err = %v", err)
	}
}

// TestDoctorSignIn: doctor checks that codex can sign in the way the agent
// would (a stored login, an API key in the environment, a custom model
// provider) and says what to do when it cannot, so that "all ok" is never
// followed by auth_required at the first session.
func TestDoctorSignIn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		login   string            // FAKE_CODEX_LOGIN
		env     map[string]string // the agent's environment
		args    []string
		want    string
		wantErr bool
	}{
		{name: "logged in", want: "ok   sign-in       codex is logged in (codex login status)"},
		{name: "nothing", login: "none", wantErr: true,
			want: "FAIL sign-in       codex is not signed in: run `codex login` in a terminal"},
		{name: "key on exec", login: "none", env: map[string]string{"OPENAI_API_KEY": "sk-x"}, args: []string{"--backend", "exec"},
			want: "ok   sign-in       no stored login; codex exec gets OPENAI_API_KEY from the agent's environment"},
		{name: "key on app-server", login: "none", env: map[string]string{"CODEX_API_KEY": "sk-x"},
			want: "warn sign-in       no stored login; CODEX_API_KEY is set: choose the \"Codex API key\" sign-in method in the editor"},
		{name: "custom provider", login: "none", args: []string{"-c", `model_provider="local"`},
			want: "ok   sign-in       custom model provider \"local\": no sign-in needed"},
		{name: "status unreadable", login: "broken",
			want: "warn sign-in       cannot tell whether codex is signed in:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			t.Setenv("CODEX_HOME", t.TempDir()) // no config.toml: no provider but the -c one
			t.Setenv("FAKE_CODEX_LOGIN", tc.login)
			for _, k := range []string{"OPENAI_API_KEY", "CODEX_API_KEY", "CODEXACP_BACKEND"} {
				t.Setenv(k, tc.env[k])
			}
			var out bytes.Buffer
			args := append([]string{"doctor", "--codex-path", fakeCodex(t), "--state-dir", ""}, tc.args...)
			err := run(args, strings.NewReader(""), &out, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Errorf("doctor: %v, want failure %v\n%s", err, tc.wantErr, out.String())
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("doctor output lacks %q:\n%s", tc.want, out.String())
			}
		})
	}
}

// TestStartupWorkAfterInitialize: of the start-up work, only codex
// app-server starts before the answer to initialize (a fresh agent's first
// prompt needs it); codex login status and the model catalog's codex run
// wait until that answer has been written, so they do not share the CPU
// with it, and then run without being asked.
func TestStartupWorkAfterInitialize(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("CODEX_HOME", t.TempDir())
	calls := filepath.Join(t.TempDir(), "calls")
	t.Setenv("FAKE_CODEX_CALLS", calls)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run([]string{"--codex-path", fakeCodex(t)}, inR, outW, io.Discard) }()
	defer func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(30 * time.Second):
			t.Error("run did not return after stdin closed")
		}
	}()
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	// The answer waits in the pipe until read. Work that did not wait for
	// it would start within this pause (it did at launch before).
	time.Sleep(300 * time.Millisecond)
	read := func() string { b, _ := os.ReadFile(calls); return string(b) }
	for _, early := range []string{"login status", "debug models"} {
		if strings.Contains(read(), early) {
			t.Errorf("codex %s ran before initialize was answered; codex calls:\n%s", early, read())
		}
	}
	answer, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil || !strings.Contains(answer, `"id":1`) {
		t.Fatalf("initialize answer %q, %v", answer, err)
	}
	// 30 s only keeps a failure from hanging; it bounds no speed.
	deadline := time.Now().Add(30 * time.Second)
	for !(strings.Contains(read(), "login status") && strings.Contains(read(), "debug models")) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := read(); !strings.Contains(got, "login status") || !strings.Contains(got, "debug models") || !strings.Contains(got, "app-server") {
		t.Errorf("codex calls after initialize:\n%s\nwant app-server, login status and debug models", got)
	}
}

// TestStartGate: work held back by a gate starts when it opens or when its
// result is first waited for, and is dropped when the agent leaves first.
func TestStartGate(t *testing.T) {
	t.Run("open", func(t *testing.T) {
		g := newStartGate()
		var opened atomic.Bool
		ran := make(chan bool, 1)
		inBackground(g, func() int { ran <- opened.Load(); return 1 })
		time.Sleep(50 * time.Millisecond) // an ungated f runs meanwhile
		opened.Store(true)
		g.open()
		if !<-ran {
			t.Error("ran before the gate opened")
		}
	})
	t.Run("ended", func(t *testing.T) {
		g := newStartGate()
		ctx, cancel := context.WithCancel(context.Background())
		var returned atomic.Bool
		running := make(chan struct{})
		inBackground(g, func() int {
			close(running)
			<-ctx.Done() // a codex run, say, that ends with its context
			time.Sleep(20 * time.Millisecond)
			returned.Store(true)
			return 1
		})
		g.open()
		<-running
		g.end(cancel)
		if !returned.Load() {
			t.Error("end returned before the running work did")
		}
	})
	t.Run("waited for", func(t *testing.T) {
		g := newStartGate()
		if v := inBackground(g, func() int { return 7 })(); v != 7 {
			t.Errorf("result %d, want 7", v)
		}
	})
	t.Run("left", func(t *testing.T) {
		g := newStartGate()
		var ran atomic.Bool
		wait := inBackground(g, func() int { ran.Store(true); return 7 })
		g.leave()
		if v := wait(); v != 0 || ran.Load() {
			t.Errorf("result %d (ran %v) after the agent left, want 0, not run", v, ran.Load())
		}
	})
}
