package codex

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeExecutable(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// npmInstall lays out a global npm install of @openai/codex under prefix:
// prefix/bin/codex → ../lib/node_modules/@openai/codex/bin/codex.js, and the
// platform package hoisted (or nested) with the native binary. It returns the
// native binary's path, or "" when withNative is false.
func npmInstall(t *testing.T, prefix string, nested, withNative bool) string {
	t.Helper()
	triple, platformPkg, ok := npmPlatform()
	if !ok {
		t.Skip("no npm codex package for this platform")
	}
	modules := filepath.Join(prefix, "lib", "node_modules")
	shim := filepath.Join(modules, "@openai", "codex", "bin", "codex.js")
	writeExecutable(t, shim)
	if err := os.MkdirAll(filepath.Join(prefix, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../lib/node_modules/@openai/codex/bin/codex.js", filepath.Join(prefix, "bin", "codex")); err != nil {
		t.Fatal(err)
	}
	if !withNative {
		return ""
	}
	if nested {
		modules = filepath.Join(modules, "@openai", "codex", "node_modules")
	}
	native := filepath.Join(modules, "@openai", platformPkg, "vendor", triple, "bin", "codex")
	writeExecutable(t, native)
	return native
}

// npmWindowsInstall lays out an npm install of @openai/codex as npm does on
// Windows: prefix/codex.cmd beside prefix/<modules>/@openai/codex, the
// platform package nested. It returns the native binary's path.
func npmWindowsInstall(t *testing.T, prefix, modules string) string {
	t.Helper()
	triple, platformPkg, ok := npmPlatform()
	if !ok {
		t.Skip("no npm codex package for this platform")
	}
	pkg := filepath.Join(prefix, modules, "@openai", "codex")
	writeExecutable(t, filepath.Join(pkg, "bin", "codex.js"))
	writeExecutable(t, filepath.Join(prefix, "codex.cmd"))
	native := filepath.Join(pkg, "node_modules", "@openai", platformPkg, "vendor", triple, "bin", nativeName())
	writeExecutable(t, native)
	return native
}

func TestFind(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T, dir string) (explicit, path, want string)
		notFound bool
	}{
		{
			name: "explicit path",
			setup: func(t *testing.T, dir string) (string, string, string) {
				p := filepath.Join(dir, "my", "codex")
				writeExecutable(t, p)
				return p, "", p
			},
		},
		{
			name: "explicit name looked up in PATH",
			setup: func(t *testing.T, dir string) (string, string, string) {
				p := filepath.Join(dir, "bin", "codex-dev")
				writeExecutable(t, p)
				return "codex-dev", filepath.Join(dir, "bin"), p
			},
		},
		{
			name: "PATH",
			setup: func(t *testing.T, dir string) (string, string, string) {
				p := filepath.Join(dir, "bin", "codex")
				writeExecutable(t, p)
				return "", filepath.Join(dir, "empty") + ":" + filepath.Join(dir, "bin"), p
			},
		},
		{
			name: "npm shim in PATH gives the hoisted native binary",
			setup: func(t *testing.T, dir string) (string, string, string) {
				native := npmInstall(t, dir, false, true)
				return "", filepath.Join(dir, "bin"), native
			},
		},
		{
			name: "explicit npm shim gives the nested native binary",
			setup: func(t *testing.T, dir string) (string, string, string) {
				native := npmInstall(t, dir, true, true)
				return filepath.Join(dir, "bin", "codex"), "", native
			},
		},
		{
			name: "npm shim without native binary is kept",
			setup: func(t *testing.T, dir string) (string, string, string) {
				npmInstall(t, dir, false, false)
				return "", filepath.Join(dir, "bin"), filepath.Join(dir, "bin", "codex")
			},
		},
		{
			// npm on Windows writes codex.cmd (and codex.ps1) next to
			// node_modules instead of a symlink to codex.js.
			name: "Windows npm wrapper gives the native binary",
			setup: func(t *testing.T, dir string) (string, string, string) {
				native := npmWindowsInstall(t, filepath.Join(dir, "npm"), "node_modules")
				return filepath.Join(dir, "npm", "codex.cmd"), "", native
			},
		},
		{
			name: "Windows npm wrapper in node_modules/.bin",
			setup: func(t *testing.T, dir string) (string, string, string) {
				native := npmWindowsInstall(t, dir, "node_modules")
				wrapper := filepath.Join(dir, "node_modules", ".bin", "codex.ps1")
				writeExecutable(t, wrapper)
				return wrapper, "", native
			},
		},
		{
			name: "a codex.cmd without an npm install is kept",
			setup: func(t *testing.T, dir string) (string, string, string) {
				p := filepath.Join(dir, "codex.cmd")
				writeExecutable(t, p)
				return p, "", p
			},
		},
		{
			name: "missing explicit path",
			setup: func(t *testing.T, dir string) (string, string, string) {
				return filepath.Join(dir, "nope", "codex"), "", ""
			},
			notFound: true,
		},
		{
			name: "not in PATH",
			setup: func(t *testing.T, dir string) (string, string, string) {
				return "", dir, ""
			},
			notFound: true,
		},
		{
			name: "not executable",
			setup: func(t *testing.T, dir string) (string, string, string) {
				p := filepath.Join(dir, "codex")
				os.WriteFile(p, []byte("data"), 0o644)
				return p, "", ""
			},
			notFound: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			explicit, path, want := tt.setup(t, dir)
			t.Setenv("PATH", path)
			got, err := Find(explicit)
			if tt.notFound {
				if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "npm i -g @openai/codex") {
					t.Errorf("Find(%q) = %q, %v; want ErrNotFound with the install hint", explicit, got, err)
				}
				return
			}
			if err != nil || got != want {
				t.Errorf("Find(%q) = %q, %v; want %q", explicit, got, err, want)
			}
		})
	}
}

func TestNativeBinary(t *testing.T) {
	dir := t.TempDir()
	native := npmInstall(t, dir, false, true)
	modules := filepath.Join(dir, "lib", "node_modules")
	if got, ok := NativeBinary(modules); !ok || got != native {
		t.Errorf("NativeBinary = %q, %v; want %q", got, ok, native)
	}
	if got, ok := NativeBinary(dir); ok {
		t.Errorf("NativeBinary(no install) = %q, want none", got)
	}
}
