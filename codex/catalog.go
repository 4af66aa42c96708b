package codex

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/codexacp/codexacp/codex/proc"
	"github.com/codexacp/codexacp/internal/regularfile"
)

// catalogTimeout bounds the two codex runs that make a catalog.
const catalogTimeout = 30 * time.Second

var (
	catalogRuns singleflight.Group
	// catalogPaths remembers finished catalogs by binary identity and cache
	// dir, so that later calls in this process run nothing.
	catalogPaths sync.Map
)

// ModelCatalog returns the path of a model catalog for codexPath without
// codex's own apply_patch tool: the binary's bundled catalog
// (`codex debug models --bundled`) with "apply_patch_tool_type": null in
// every model. Pass it to codex as -c model_catalog_json="<path>"; the file
// replaces the whole catalog, which is why it starts from the bundled one.
//
// The file is <cacheDir>/model-catalog-<version>.json, written atomically and
// made once per codex version; concurrent callers share one run.
func ModelCatalog(ctx context.Context, codexPath, cacheDir string) (string, error) {
	if ctx.Err() != nil {
		return "", fmt.Errorf("codex model catalog: %w", context.Cause(ctx))
	}
	fi, err := os.Stat(codexPath)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	key := fmt.Sprintf("%s\x00%d\x00%d\x00%s", codexPath, fi.Size(), fi.ModTime().UnixNano(), cacheDir)
	if p, ok := catalogPaths.Load(key); ok {
		if _, err := os.Stat(p.(string)); err == nil {
			return p.(string), nil
		}
	}
	// A catalog made for this very binary by an earlier agent process:
	// found without running codex, so that the agent answers initialize
	// without waiting for a codex start-up.
	index := binaryIndexPath(cacheDir, key)
	if b, err := regularfile.ReadFile(index, 4096, regularfile.FollowLink); err == nil {
		if p := string(b); filepath.Dir(p) == cacheDir {
			if _, err := os.Stat(p); err == nil {
				catalogPaths.Store(key, p)
				return p, nil
			}
		}
	}
	// The shared run must not fail for everyone because the first caller
	// gave up, so it runs detached from ctx, with its own time limit.
	runCtx := context.WithoutCancel(ctx)
	ch := catalogRuns.DoChan(key, func() (any, error) {
		runCtx, cancel := context.WithTimeout(runCtx, catalogTimeout)
		defer cancel()
		path, err := makeCatalog(runCtx, codexPath, cacheDir)
		if err != nil {
			return "", err
		}
		catalogPaths.Store(key, path)
		// Best effort: without the index the next process asks codex again.
		_ = writeFileAtomic(index, []byte(path))
		return path, nil
	})
	return awaitShared(ctx, ch, "codex model catalog")
}

func makeCatalog(ctx context.Context, codexPath, cacheDir string) (string, error) {
	version, err := Version(ctx, codexPath)
	if err != nil {
		return "", err
	}
	path := filepath.Join(cacheDir, "model-catalog-"+version+".json")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	bundled, err := runCodex(ctx, codexPath, "debug", "models", "--bundled")
	if err != nil {
		return "", err
	}
	catalog, err := withoutApplyPatch(bundled)
	if err != nil {
		return "", fmt.Errorf("codex debug models --bundled: %w", err)
	}
	if err := writeFileAtomic(path, catalog); err != nil {
		return "", fmt.Errorf("codex model catalog: %w", err)
	}
	return path, nil
}

// binaryIndexPath names the file that remembers which catalog was made for
// the binary key identifies (path, size, modification time).
func binaryIndexPath(cacheDir, key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(cacheDir, "model-catalog-for-"+hex.EncodeToString(sum[:8]))
}

// runCodex runs a short codex subcommand and returns its stdout.
func runCodex(ctx context.Context, codexPath string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, codexPath, args...)
	cmd.Env = proc.Env(nil, nil)
	var stdout bytes.Buffer
	stderr := proc.NewStderrLog(slog.New(slog.DiscardHandler), proc.StderrTailSize)
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = proc.DrainTimeout
	name := "codex " + strings.Join(args, " ")
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			err = proc.ExitErrorOf(exitErr.ProcessState, stderr)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return stdout.Bytes(), nil
}

// withoutApplyPatch sets "apply_patch_tool_type": null in every model of a
// catalog ({"models":[...]}), leaving every other field as it was.
func withoutApplyPatch(catalog []byte) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(catalog, &doc); err != nil {
		return nil, fmt.Errorf("parse catalog: %w", err)
	}
	var models []map[string]json.RawMessage
	if err := json.Unmarshal(doc["models"], &models); err != nil {
		return nil, fmt.Errorf("parse catalog models: %w", err)
	}
	if len(models) == 0 {
		return nil, errors.New("catalog has no models")
	}
	for _, m := range models {
		m["apply_patch_tool_type"] = json.RawMessage("null")
	}
	raw, err := json.Marshal(models)
	if err != nil {
		return nil, err
	}
	doc["models"] = raw
	return json.Marshal(doc)
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so that readers see the old file or the complete new one.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Version is codex's version as `codex --version` prints it ("0.169.0").
// It runs codex once per binary (path, size, modification time) in this
// process: the agent's start asks for the version twice, for the log and
// /status and to name the model catalog, and concurrent callers share the
// run.
func Version(ctx context.Context, codexPath string) (string, error) {
	fi, err := os.Stat(codexPath)
	if err != nil {
		return versionOnce(ctx, codexPath)
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", codexPath, fi.Size(), fi.ModTime().UnixNano())
	if v, ok := versions.Load(key); ok {
		return v.(string), nil
	}
	// Detached from ctx like the catalog's runs: the shared run must not
	// fail for everyone because the first caller gave up.
	runCtx := context.WithoutCancel(ctx)
	ch := versionRuns.DoChan(key, func() (any, error) {
		runCtx, cancel := context.WithTimeout(runCtx, catalogTimeout)
		defer cancel()
		v, err := versionOnce(runCtx, codexPath)
		if err == nil {
			versions.Store(key, v)
		}
		return v, err
	})
	return awaitShared(ctx, ch, "codex --version")
}

// awaitShared waits for a shared run's string result (a singleflight
// channel) or for ctx; the run goes on for its other callers either way.
func awaitShared(ctx context.Context, ch <-chan singleflight.Result, what string) (string, error) {
	select {
	case res := <-ch:
		if res.Err != nil {
			return "", res.Err
		}
		return res.Val.(string), nil
	case <-ctx.Done():
		return "", fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
}

var (
	versionRuns singleflight.Group
	versions    sync.Map // binary identity → version
)

// versionOnce runs `codex --version`.
func versionOnce(ctx context.Context, codexPath string) (string, error) {
	out, err := runCodex(ctx, codexPath, "--version")
	if err != nil {
		return "", err
	}
	v := versionOf(string(out))
	if v == "" {
		return "", fmt.Errorf("codex --version: no version in %q", out)
	}
	return v, nil
}

// versionOf extracts the version from `codex --version` output
// ("codex-cli 0.169.0"), reduced to characters safe in a file name.
func versionOf(out string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(out), "\n") // later lines may be warnings
	fields := strings.Fields(first)
	if len(fields) == 0 {
		return ""
	}
	v := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_', r == '+':
			return r
		}
		return -1
	}, fields[len(fields)-1])
	return strings.Trim(v, ".")
}
