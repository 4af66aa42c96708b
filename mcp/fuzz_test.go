package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"testing"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
)

// fuzzFiles is the file system every fuzzed call starts from: text with
// LF and CRLF line ends, a file without a final newline, a binary file, an
// empty one and a directory.
func fuzzFiles() *fsopstest.MemFiles {
	m := fsopstest.NewMemFiles()
	m.Set("/w/a.txt", "alpha\nbeta\ngamma\nbeta\n")
	m.Set("/w/b.txt", "one\r\ntwo\r\nthree")
	m.Set("/w/bin", "\x00\x01\x02")
	m.Set("/w/empty", "")
	m.Mkdir("/w/d")
	return m
}

// fileState is every file's content.
func fileState(m *fsopstest.MemFiles) map[string]string {
	s := make(map[string]string)
	for _, p := range m.Paths() {
		if c, ok := m.Get(p); ok {
			s[p] = c
		}
	}
	return s
}

// knownCodes are the codes a tool may fail with over in-memory files that
// never fail: the tool codes of the contract. An internal error would be a
// bug here.
var knownCodes = map[int]bool{
	fsops.CodeNotFound: true, fsops.CodePermission: true, fsops.CodeIsDirectory: true,
	fsops.CodeBinary: true, fsops.CodeNotRegular: true, fsops.CodeStringNotFound: true,
	fsops.CodeMatchCount: true, fsops.CodeConflict: true, fsops.CodeStale: true,
	fsops.CodeOldMismatch: true, fsops.CodeAnchorMismatch: true, fsops.CodeInvalidRequest: true,
}

// errFuzzVeto is the user's refusal in fuzzed calls.
var errFuzzVeto = fsops.PermissionError("vetoed", nil)

// FuzzToolArguments runs arbitrary arguments through a tool the way a
// tools/call does (parseArguments, then the tool's run: schema validation,
// decoding, the engine, with a BeforeWrite hook) over in-memory files.
// tool selects the tool (tool%7, in toolNames order) and whether the hook
// vetoes the write ((tool/7)%2 == 1). Invariants: no panic; a failure is an
// *fsops.Error with a contract code and a message; a failed or read-only
// call changes no file; a successful write changes only the file its hook
// saw, to the content it saw; results and error results marshal to JSON.
func FuzzToolArguments(f *testing.F) {
	tools := specs()
	f.Fuzz(func(t *testing.T, tool byte, raw []byte) {
		spec := tools[int(tool)%len(tools)]
		veto := (int(tool)/len(tools))%2 == 1
		name := spec.tool.Name
		mem := fuzzFiles()
		before := fileState(mem)

		args := parseArguments(raw)
		c := &Call{ID: newCallID(), Tool: name, Arguments: raw, Path: args.path()}
		var changes []*fsops.Change
		hook := func(ctx context.Context, ch *fsops.Change) error {
			if isReadOnly(name) {
				t.Fatalf("%s called BeforeWrite", name)
			}
			if ch == nil || ch.Tool != name || ch.Path == "" {
				t.Fatalf("%s: change %+v", name, ch)
			}
			changes = append(changes, ch)
			if veto {
				return errFuzzVeto
			}
			return nil
		}
		result, err := spec.run(context.Background(), fsops.NewEngine(mem), args, hook)
		after := fileState(mem)

		if err != nil {
			if result != nil {
				t.Fatalf("%s: both result %v and error %v", name, result, err)
			}
			var fe *fsops.Error
			if !errors.As(err, &fe) {
				t.Fatalf("%s(%q): error %T %v is not an *fsops.Error", name, raw, err, err)
			}
			if !knownCodes[fe.Code] || fe.Message == "" {
				t.Fatalf("%s(%q): error code %d message %q", name, raw, fe.Code, fe.Message)
			}
			if !maps.Equal(before, after) {
				t.Fatalf("%s(%q) failed (%v) but changed files: %q -> %q", name, raw, err, before, after)
			}
			te := toolError(err)
			if te.Hint == "" {
				t.Fatalf("%s: no hint for %v", name, err)
			}
			mustMarshal(t, errorResult(te))
			return
		}

		if result == nil {
			t.Fatalf("%s(%q): neither result nor error", name, raw)
		}
		if veto && len(changes) > 0 {
			t.Fatalf("%s(%q): vetoed write succeeded", name, raw)
		}
		mustMarshal(t, result)
		mustMarshal(t, successResult(c, result))
		switch len(changes) {
		case 0:
			if !maps.Equal(before, after) {
				t.Fatalf("%s(%q) changed files without asking: %q -> %q", name, raw, before, after)
			}
		case 1:
			ch := changes[0]
			if got, ok := mem.GetBytes(ch.Path); !ok || !bytes.Equal(got, ch.New) {
				t.Fatalf("%s(%q): %s = %q, the change said %q", name, raw, ch.Path, got, ch.New)
			}
			if _, existed := before[ch.Path]; existed == ch.Created {
				t.Fatalf("%s(%q): created = %v for %s, which existed: %v", name, raw, ch.Created, ch.Path, existed)
			}
			delete(after, ch.Path)
			delete(before, ch.Path)
			if !maps.Equal(before, after) {
				t.Fatalf("%s(%q) changed other files than %s: %q -> %q", name, raw, ch.Path, before, after)
			}
		default:
			t.Fatalf("%s(%q): %d writes asked for", name, raw, len(changes))
		}
	})
}

func mustMarshal(t *testing.T, v any) {
	t.Helper()
	if _, err := json.Marshal(v); err != nil {
		t.Fatalf("result %#v does not marshal: %v", v, err)
	}
}
