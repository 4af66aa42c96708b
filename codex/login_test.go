//go:build unix

package codex_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/e2e/codextest"
)

// loginScript writes a shell script standing in for codex's login
// commands: it records its arguments in $dir/args and runs body.
func loginScript(t *testing.T, body string) (path, dir string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "codex")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + filepath.Join(dir, "args") + "\n" + body
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, dir
}

func TestLoginStatusFakeCodex(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       func(error) bool
		wantLogin  codex.Login
		wantText   string
	}{
		{"chatgpt", "echo 'Logged in using ChatGPT' >&2; exit 0", func(err error) bool { return err == nil }, codex.LoginChatGPT, ""},
		{"api key", "echo 'WARNING: proceeding …' >&2; echo 'API key configured - sk-test-***lmnop' >&2; echo 'Authentication is checked when you send a request.' >&2",
			func(err error) bool { return err == nil }, codex.LoginAPIKey, ""},
		{"access token", "echo 'Logged in using access token'", func(err error) bool { return err == nil }, codex.LoginOther, ""},
		{"silent", "exit 0", func(err error) bool { return err == nil }, codex.LoginOther, ""},
		{"not logged in", "echo 'WARNING: proceeding, even though …' >&2; echo 'Not logged in' >&2; exit 1",
			func(err error) bool { return errors.Is(err, codex.ErrNotLoggedIn) }, codex.LoginNone, "codex is not logged in (Not logged in)"},
		{"other failure", "echo boom >&2; exit 3",
			func(err error) bool { return err != nil && !errors.Is(err, codex.ErrNotLoggedIn) }, codex.LoginNone, "exit status 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, dir := loginScript(t, tc.body)
			login, err := codex.LoginStatus(context.Background(), path, []string{`model="m"`}, nil)
			if !tc.want(err) || login != tc.wantLogin {
				t.Fatalf("LoginStatus = %q, %v; want %q", login, err, tc.wantLogin)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("LoginStatus = %q, want it to contain %q", err, tc.wantText)
			}
			args, _ := os.ReadFile(filepath.Join(dir, "args"))
			if got, want := string(args), "login\nstatus\n-c\nmodel=\"m\"\n"; got != want {
				t.Errorf("codex args = %q, want %q", got, want)
			}
		})
	}
}

func TestLoginStatusCodexMissing(t *testing.T) {
	_, err := codex.LoginStatus(context.Background(), filepath.Join(t.TempDir(), "nope"), nil, nil)
	if err == nil || errors.Is(err, codex.ErrNotLoggedIn) {
		t.Fatalf("LoginStatus = %v, want a failure to run codex", err)
	}
}

func TestLoginStatusCancelled(t *testing.T) {
	path, _ := loginScript(t, "exec sleep 60")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := codex.LoginStatus(ctx, path, nil, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("LoginStatus = %v, want context.Canceled", err)
	}
}

func TestLogoutFakeCodex(t *testing.T) {
	path, dir := loginScript(t, "exit 0")
	if err := codex.Logout(context.Background(), path, nil, nil); err != nil {
		t.Fatal(err)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args"))
	if string(args) != "logout\n" {
		t.Errorf("codex args = %q", args)
	}
}

// TestLoginStatusRealCodex checks the exit statuses and words against the
// pinned codex in an empty CODEX_HOME: not logged in (an API key in the
// environment does not count), then an API-key login once a key was saved
// with `codex login --with-api-key`, not logged in after Logout, and a
// ChatGPT login once auth.json holds (made-up) ChatGPT tokens.
func TestLoginStatusRealCodex(t *testing.T) {
	path := codextest.Binary(t)
	env, home := codextest.Env(t)
	ctx := context.Background()
	withKey := append(append([]string(nil), env...), "OPENAI_API_KEY=sk-test-not-a-key", "CODEX_API_KEY=sk-test-not-a-key")
	for _, e := range [][]string{env, withKey} {
		if _, err := codex.LoginStatus(ctx, path, nil, e); !errors.Is(err, codex.ErrNotLoggedIn) {
			t.Fatalf("LoginStatus in an empty home = %v, want ErrNotLoggedIn", err)
		}
	}
	save := exec.CommandContext(ctx, path, "login", "--with-api-key")
	save.Env, save.Stdin = env, strings.NewReader("sk-test-not-a-key\n")
	if err := save.Run(); err != nil {
		t.Fatalf("codex login --with-api-key: %v", err)
	}
	if login, err := codex.LoginStatus(ctx, path, nil, env); err != nil || login != codex.LoginAPIKey {
		t.Fatalf("LoginStatus after codex login --with-api-key = %q, %v; want %q", login, err, codex.LoginAPIKey)
	}
	if err := codex.Logout(ctx, path, nil, env); err != nil {
		t.Fatal(err)
	}
	if _, err := codex.LoginStatus(ctx, path, nil, env); !errors.Is(err, codex.ErrNotLoggedIn) {
		t.Fatalf("LoginStatus after Logout = %v, want ErrNotLoggedIn", err)
	}
	// What a ChatGPT sign-in leaves; codex login status reads it without
	// asking OpenAI.
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	jwt := b64(`{"alg":"none","typ":"JWT"}`) + "." + b64(`{"email":"user@example.com","https://api.openai.com/auth":{"chatgpt_plan_type":"plus","chatgpt_account_id":"acc"}}`) + ".sig"
	auth := `{"auth_mode":"chatgpt","OPENAI_API_KEY":null,"tokens":{"id_token":"` + jwt + `","access_token":"` + jwt +
		`","refresh_token":"r","account_id":"acc"},"last_refresh":"2099-01-01T00:00:00Z"}`
	if err := os.WriteFile(filepath.Join(home, "auth.json"), []byte(auth), 0o600); err != nil {
		t.Fatal(err)
	}
	if login, err := codex.LoginStatus(ctx, path, nil, env); err != nil || login != codex.LoginChatGPT {
		t.Fatalf("LoginStatus with ChatGPT tokens = %q, %v; want %q", login, err, codex.LoginChatGPT)
	}
}

func TestCustomProvider(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	toml := filepath.Join(home, "config.toml")
	for _, tc := range []struct {
		name, toml string
		config     []string
		want       string
	}{
		{"none", "", nil, ""},
		{"-c custom", "", []string{"model_provider=mock"}, "mock"},
		{"-c openai", "", []string{`model_provider="openai"`}, ""},
		{"-c wins over config.toml", "model_provider = \"ollama\"\n", []string{"model_provider=openai"}, ""},
		{"config.toml", "model = \"x\"\nmodel_provider = \"ollama\" # local\n[model_providers.ollama]\nname = \"o\"\n", nil, "ollama"},
		{"config.toml table only", "[profiles.p]\nmodel_provider = \"ollama\"\n", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(toml, []byte(tc.toml), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := codex.CustomProvider(tc.config); got != tc.want {
				t.Errorf("CustomProvider(%q) with config.toml %q = %q, want %q", tc.config, tc.toml, got, tc.want)
			}
		})
	}
}
