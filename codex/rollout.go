package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Home is codex's state directory: $CODEX_HOME, else ~/.codex.
func Home() (string, error) {
	if h := os.Getenv("CODEX_HOME"); h != "" {
		return h, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("codex home: %w", err)
	}
	return filepath.Join(home, ".codex"), nil
}

// RolloutPath finds the rollout file codex keeps for a thread:
// <home>/sessions/YYYY/MM/DD/rollout-<timestamp>-<thread id>.jsonl. When
// several match (none should), the newest name wins.
func RolloutPath(home, threadID string) (string, error) {
	if threadID == "" || strings.ContainsAny(threadID, `/\*?[`) {
		return "", fmt.Errorf("invalid thread id %q", threadID)
	}
	pattern := filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+threadID+".jsonl")
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return "", err
	}
	if len(matches) == 0 {
		return "", fmt.Errorf("no rollout for thread %s under %s", threadID, filepath.Join(home, "sessions"))
	}
	sort.Strings(matches)
	return matches[len(matches)-1], nil
}
