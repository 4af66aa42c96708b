// Package npminstall_test installs codexacp the way a user does, from the
// npm packages packaging/npm/build.sh makes, and drives the installed
// command through an ACP turn: it proves the launcher, the stamped binary
// and the package layout together.
//
// It packs the main package and this platform's binary package with
// `npm pack`, installs both tarballs into a fresh project offline (the
// other platforms' optional dependencies are unpublished, and npm skips
// them), and runs node_modules/.bin/codexacp against real codex and the
// mock model, as the e2e suite does. It needs npm and the pinned codex
// (`cd e2e && npm ci`), so it runs only with CODEXACP_E2E=1 (CI sets it).
package npminstall_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/codextest"
	"github.com/codexacp/codexacp/e2e/mockapi"
	"github.com/codexacp/codexacp/e2e/npmbin"
	"github.com/codexacp/codexacp/internal/acpschema"
	"github.com/codexacp/codexacp/internal/fakeeditor"
	"github.com/codexacp/codexacp/internal/syncbuf"
)

// version is what the test stamps into the packages and the binary.
const version = "0.0.0-npmtest.1"

// install is one offline npm install of the packed packages.
type install struct {
	platform string // "linux-x64"
	project  string // the project the tarballs were installed into
	launcher string // node_modules/.bin/codexacp
	binary   string // the platform package's binary
}

func TestInstalledPackage(t *testing.T) {
	if os.Getenv(npmbin.EnvRequired) != "1" {
		t.Skipf("packs and installs the npm packages: runs with %s=1", npmbin.EnvRequired)
	}
	in := installPackages(t)
	t.Run("Version", func(t *testing.T) { testVersion(t, in) })
	t.Run("Turn", func(t *testing.T) { testTurn(t, in) })
	t.Run("Signals", func(t *testing.T) { testSignals(t, in) })
	// Last: it takes the platform package away for a moment.
	t.Run("MissingPlatformPackage", func(t *testing.T) { testMissingPlatformPackage(t, in) })
}

// installPackages builds and packs the main package and this platform's
// package with packaging/npm/build.sh (without -trimpath, so that the build
// reuses what go test compiled), then installs both tarballs into a
// fresh project with no registry.
func installPackages(t *testing.T) *install {
	platform, ok := npmPlatform[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		t.Fatalf("codexacp has no npm package for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is needed to pack and install the packages: %v", err)
	}
	root := repoRoot(t)
	out := t.TempDir()
	started := time.Now()
	build := exec.Command("bash", filepath.Join(root, "packaging", "npm", "build.sh"), "-o", out, "-v", version, "--pack", "--no-trimpath", platform)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, b)
	}
	t.Logf("build.sh built and packed in %v", time.Since(started).Round(time.Millisecond))

	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"private": true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	started = time.Now()
	cmd := exec.Command(npm, "install", "--offline", "--no-audit", "--no-fund", "--loglevel=error",
		filepath.Join(out, "codexacp-"+version+".tgz"),
		filepath.Join(out, "codexacp-"+platform+"-"+version+".tgz"))
	cmd.Dir = project
	// An empty cache and --offline: nothing can come from a registry.
	cmd.Env = append(os.Environ(), "npm_config_cache="+t.TempDir(), "npm_config_update_notifier=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install: %v\n%s", err, b)
	}
	t.Logf("npm install took %v", time.Since(started).Round(time.Millisecond))

	exe := "codexacp"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	modules := filepath.Join(project, "node_modules")
	in := &install{
		platform: platform,
		project:  project,
		launcher: filepath.Join(modules, ".bin", "codexacp"),
		binary:   filepath.Join(modules, "codexacp-"+platform, "bin", exe),
	}
	// The layout: the launcher linked as the bin, the binary executable in
	// the platform package, no other platform package.
	if target, err := os.Readlink(in.launcher); err != nil || filepath.ToSlash(target) != "../codexacp/bin/codexacp.js" {
		t.Errorf("node_modules/.bin/codexacp → %q (%v), want ../codexacp/bin/codexacp.js", target, err)
	}
	if !npmbin.IsExecutable(in.binary) {
		t.Fatalf("%s is not an executable file", in.binary)
	}
	entries, err := os.ReadDir(modules)
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			pkgs = append(pkgs, e.Name())
		}
	}
	if got, want := strings.Join(pkgs, " "), "codexacp codexacp-"+platform; got != want {
		t.Errorf("node_modules holds %s, want %s", got, want)
	}
	return in
}

// npmPlatform maps GOOS/GOARCH to the platform package's suffix (npm's
// process.platform-process.arch).
var npmPlatform = map[string]string{
	"linux/amd64":   "linux-x64",
	"linux/arm64":   "linux-arm64",
	"darwin/amd64":  "darwin-x64",
	"darwin/arm64":  "darwin-arm64",
	"windows/amd64": "win32-x64",
}

func repoRoot(t *testing.T) string {
	t.Helper()
	modules, err := npmbin.NodeModules() // <root>/e2e/node_modules
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(filepath.Dir(modules))
}

// testVersion: the installed command reports the stamped version, and
// passes on the binary's arguments, stderr and exit code.
func testVersion(t *testing.T, in *install) {
	out, err := exec.Command(in.launcher, "--version").Output()
	if err != nil {
		t.Fatalf("codexacp --version: %v", err)
	}
	if got, want := strings.TrimSpace(string(out)), "codexacp "+version; got != want {
		t.Errorf("codexacp --version = %q, want %q", got, want)
	}

	var stderr bytes.Buffer
	cmd := exec.Command(in.launcher, "--no-such-flag")
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("codexacp --no-such-flag: %v, want exit code 1", err)
	}
	if !strings.Contains(stderr.String(), "flag provided but not defined: -no-such-flag") {
		t.Errorf("codexacp --no-such-flag wrote %q to stderr", stderr.String())
	}
}

// testTurn: initialize, session/new and one turn against the mock model,
// through the launcher; closing stdin ends the binary and the launcher with
// exit code 0.
func testTurn(t *testing.T, in *install) {
	codexPath := codextest.Binary(t)
	mock := mockapi.New(t)
	env, _ := codextest.Env(t)
	args := []string{"--codex-path", codexPath, "--log-level", "debug", "-c", `model="gpt-5.5"`}
	for _, c := range append(mockapi.CodexConfig(mock.URL()), codextest.OfflineConfig...) {
		args = append(args, "-c", c)
	}
	cmd := exec.Command(in.launcher, args...)
	cmd.Env = env
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() {
		if !waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("codexacp stderr:\n%s", stderr.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	editor := fakeeditor.Connect(stdin, stdout, fakeeditor.Options{FS: true})

	ini, err := editor.Initialize(ctx)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if ini.AgentInfo == nil || ini.AgentInfo.Name != "codexacp" || ini.AgentInfo.Version != version {
		t.Errorf("agentInfo = %+v, want codexacp %s", ini.AgentInfo, version)
	}
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sess, err := editor.Conn.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: cwd, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	mock.Enqueue(mockapi.Reply(mockapi.Message("Hello from the installed codexacp")))
	resp, err := editor.Conn.Prompt(ctx, acpsdk.PromptRequest{SessionId: sess.SessionId, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("say hello")}})
	if err != nil {
		t.Fatalf("session/prompt: %v", err)
	}
	if resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Errorf("stopReason = %q", resp.StopReason)
	}
	var text strings.Builder
	for _, n := range editor.Updates() {
		if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
			text.WriteString(c.Content.Text.Text)
		}
	}
	if text.String() != "Hello from the installed codexacp" {
		t.Errorf("agent message = %q", text.String())
	}
	if n := len(mock.Requests()); n != 1 {
		t.Errorf("model requests = %d, want 1", n)
	}

	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		waited = true
		if err != nil {
			t.Errorf("codexacp after its stdin closed: %v, want exit code 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("codexacp did not exit after its stdin closed")
	}
	for _, raw := range editor.Raw() {
		if err := acpschema.ValidateMessage(raw); err != nil {
			t.Errorf("agent message violates the ACP schema: %v\n%s", err, raw)
		}
	}
}

// testSignals: the launcher runs the platform package's binary, passes
// SIGTERM on to it, and dies of the signal that kills the binary.
func testSignals(t *testing.T, in *install) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	env, _ := codextest.Env(t)
	start := func() (*exec.Cmd, *os.Process) {
		t.Helper()
		// No codex is needed: the agent serves, waiting on its stdin.
		cmd := exec.Command(in.launcher, "--codex-path", "/nonexistent/codex", "--log-level", "error")
		cmd.Env = env
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		// Once it answers, codexacp handles its signals.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := fakeeditor.Connect(stdin, stdout, fakeeditor.Options{}).Initialize(ctx); err != nil {
			t.Fatalf("initialize: %v", err)
		}
		pid := childOf(cmd.Process.Pid)
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || exe != in.binary {
			t.Fatalf("the launcher's child runs %q (%v), want %s", exe, err, in.binary)
		}
		child, err := os.FindProcess(pid)
		if err != nil {
			t.Fatal(err)
		}
		return cmd, child
	}
	wait := func(cmd *exec.Cmd) *exec.ExitError {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatal(err)
			}
			return exit
		case <-time.After(15 * time.Second):
			t.Fatal("the launcher did not exit")
			return nil
		}
	}

	// SIGTERM to the launcher reaches codexacp, which shuts down cleanly.
	cmd, child := start()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if exit := wait(cmd); exit != nil {
		t.Errorf("after SIGTERM the launcher exited with %v, want codexacp's exit code 0", exit)
	}
	if !eventually(5*time.Second, func() bool { return child.Signal(syscall.Signal(0)) != nil }) {
		t.Errorf("codexacp (pid %d) outlived the launcher", child.Pid)
	}

	// A signal that kills codexacp kills the launcher the same way.
	cmd, child = start()
	if err := child.Kill(); err != nil {
		t.Fatal(err)
	}
	exit := wait(cmd)
	if !killedBy(exit, syscall.SIGKILL) {
		t.Errorf("codexacp killed by SIGKILL: the launcher ended with %v, want the same signal", exit)
	}
}

// testMissingPlatformPackage: without the platform package the launcher
// fails, naming it.
func testMissingPlatformPackage(t *testing.T, in *install) {
	pkg := filepath.Join(in.project, "node_modules", "codexacp-"+in.platform)
	aside := pkg + ".aside"
	if err := os.Rename(pkg, aside); err != nil {
		t.Fatal(err)
	}
	defer os.Rename(aside, pkg)
	var stderr bytes.Buffer
	cmd := exec.Command(in.launcher, "--version")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("without codexacp-%s: %v, want exit code 1", in.platform, err)
	}
	if len(out) != 0 {
		t.Errorf("wrote to stdout: %q", out)
	}
	if msg := stderr.String(); !strings.Contains(msg, "platform package codexacp-"+in.platform+" is not installed") {
		t.Errorf("stderr does not name the missing package: %q", msg)
	}
}

// killedBy reports whether exit is a death by signal sig.
func killedBy(exit *exec.ExitError, sig syscall.Signal) bool {
	if exit == nil {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// childOf returns a child process of pid, or 0.
func childOf(pid int) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			return child
		}
	}
	return 0
}

// eventually polls cond for up to d.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
