package record

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// Placeholders for the directories of the recording machine that a replay
// brings its own of. Every path under them is written with the placeholder
// in place of the directory (see Recorder.SetDirs).
const (
	StateDirPlaceholder  = "$CODEXACP_STATE" // the agent's state directory (--state-dir)
	CodexHomePlaceholder = "$CODEX_HOME"     // codex's home (CODEX_HOME, default ~/.codex)
)

// maxStoredBytes bounds the content of one stored file. Rollouts of long
// threads grow to megabytes, and a load cannot be replayed without its
// rollout, so the bound is far above maxFileBytes.
const maxStoredBytes = 64 << 20

// SetDirs names the agent's state directory and codex's home. From then
// on, every path under them is written as StateDirPlaceholder/… and
// CodexHomePlaceholder/…, in every entry: a replay puts its own directories
// there. Relative directories are taken from the working directory; empty
// ones and the root are ignored. Codex's installation id, read from its
// home, is replaced wherever it appears (InstallationPlaceholder). Call it
// before Start.
func (r *Recorder) SetDirs(stateDir, codexHome string) {
	// The file I/O happens before r.mu is taken: nothing waits on it.
	var dirs []dirPlaceholder
	var installationID string
	for _, d := range []struct{ dir, placeholder string }{
		{stateDir, StateDirPlaceholder},
		{codexHome, CodexHomePlaceholder},
	} {
		if d.dir == "" {
			continue
		}
		dir, err := filepath.Abs(d.dir)
		if err != nil || dir == filepath.Dir(dir) { // the root: every path would match
			continue
		}
		dirs = append(dirs, dirPlaceholder{from: dir, to: d.placeholder})
		if d.placeholder == CodexHomePlaceholder {
			installationID = readInstallationID(dir)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.storeDirs = dirs
	r.addInstallationID(installationID)
	r.sortDirsLocked()
}

type dirPlaceholder struct {
	from, to string
}

// abbreviate writes the placeholders of SetDirs and SetMachine into an
// encoded entry.
func (r *Recorder) abbreviate(line []byte) []byte {
	for _, d := range r.dirs {
		line = RebasePaths(line, d.from, d.to)
	}
	return r.hideMachine(line)
}

// Stored records the file at path, which the agent read to list or load
// sessions (a session record, codex's rollout of a thread), with its
// content as it is now: a replay recreates it before it sends the editor's
// request. Its signature fits acp.Options.ObserveStored.
func (r *Recorder) Stored(path string) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs // the agent's state directory may be relative
	}
	e := fileState(KindStored, path, path, maxStoredBytes, regularfile.FollowLink)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.world.keepStored(e) {
		r.writeLocked(e)
	}
}

// RebasePaths rewrites, in JSON text, every path under the directory from
// to lie under to instead. Only whole paths are rewritten: from must not
// continue a longer path before it, and must be followed by a separator or
// by what ends a path (a quote, the backslash of an escape, a space, a
// full stop ending a sentence).
func RebasePaths(data []byte, from, to string) []byte {
	f, t := jsonText(from), jsonText(to)
	if len(f) == 0 || !bytes.Contains(data, f) {
		return data
	}
	var out []byte
	copied := 0 // data[:copied] is in out
	for pos := 0; ; {
		i := bytes.Index(data[pos:], f)
		if i < 0 {
			break
		}
		start, end := pos+i, pos+i+len(f)
		pos = end
		if start > 0 && pathByte(data[start-1]) && !afterEscape(data[:start]) ||
			end < len(data) && pathByte(data[end]) && data[end] != '/' && !endOfSentence(data[end:]) {
			continue // part of a longer name
		}
		out = append(append(out, data[copied:start]...), t...)
		copied = end
	}
	if copied == 0 {
		return data
	}
	return append(out, data[copied:]...)
}

// endOfSentence reports whether rest, what follows a path, is a full stop
// ending a sentence ("… in /w/x." in a message) rather than more of a name:
// a period followed by what cannot continue a name, or by nothing.
func endOfSentence(rest []byte) bool {
	return rest[0] == '.' && (len(rest) == 1 || !pathByte(rest[1]))
}

// afterEscape reports whether text ends in a JSON escape such as \n: what
// follows starts a new line, not a longer name.
func afterEscape(text []byte) bool {
	n := len(text)
	if n < 2 || strings.IndexByte("nrtbf", text[n-1]) < 0 {
		return false
	}
	backslashes := 0
	for i := n - 2; i >= 0 && text[i] == '\\'; i-- {
		backslashes++
	}
	return backslashes%2 == 1
}

// pathByte reports whether b can belong to a file name or path, so that a
// directory's path next to it is part of a longer one.
func pathByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b >= 0x80 ||
		strings.IndexByte("/._-~+@%$", b) >= 0
}

// jsonText is s as it appears inside a JSON string of an entry (Encode
// leaves HTML characters unescaped).
func jsonText(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return b[1 : len(b)-1]
}
