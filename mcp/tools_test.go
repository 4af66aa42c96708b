package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
)

// toolNames lists the tools every server offers, in the order the fuzz
// tests number them.
var toolNames = []string{
	fsops.ToolReadTextFile,
	fsops.ToolWriteTextFile,
	fsops.ToolEditTextFile,
	fsops.ToolMultiEditTextFile,
	fsops.ToolReplaceTextLines,
	fsops.ToolInsertTextLines,
	fsops.ToolAppendTextFile,
}

// isReadOnly reports whether the named tool never writes.
func isReadOnly(tool string) bool { return tool == fsops.ToolReadTextFile }

// TestToolList checks what the model is offered: the seven tools, each
// with a description, a closed input schema whose every property is
// described, and annotations that match what the tool does.
func TestToolList(t *testing.T) {
	t.Parallel()
	cs := connectInMemory(t, NewServer(fsops.NewEngine(fsopstest.NewMemFiles()), nil))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, slices.Sorted(slices.Values(toolNames))) { // the go-sdk lists tools by name
		t.Fatalf("tools %v, want %v", names, toolNames)
	}
	wantRequired := map[string][]string{
		fsops.ToolReadTextFile:      {"path"},
		fsops.ToolWriteTextFile:     {"path", "content"},
		fsops.ToolEditTextFile:      {"path", "old_string", "new_string"},
		fsops.ToolMultiEditTextFile: {"path", "edits"},
		fsops.ToolReplaceTextLines:  {"path", "hash", "lines", "old", "new"},
		fsops.ToolInsertTextLines:   {"path", "hash", "line", "anchor", "content"},
		fsops.ToolAppendTextFile:    {"path", "hash", "content"},
	}
	for _, tool := range res.Tools {
		t.Run(tool.Name, func(t *testing.T) {
			if !strings.Contains(tool.Description, `{"error": {"code", "message", "hint"}}`) {
				t.Errorf("description does not give the error shape: %s", tool.Description)
			}
			b, _ := json.Marshal(tool.InputSchema)
			var schema struct {
				Type                 string                     `json:"type"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
				Required             []string                   `json:"required"`
				Properties           map[string]json.RawMessage `json:"properties"`
			}
			if err := json.Unmarshal(b, &schema); err != nil {
				t.Fatal(err)
			}
			if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
				t.Errorf("schema %s: want a closed object", b)
			}
			if !slices.Equal(schema.Required, wantRequired[tool.Name]) {
				t.Errorf("required %v, want %v", schema.Required, wantRequired[tool.Name])
			}
			for name, raw := range schema.Properties {
				var p struct {
					Type        any    `json:"type"`
					Description string `json:"description"`
				}
				json.Unmarshal(raw, &p)
				if p.Description == "" {
					t.Errorf("property %s has no description", name)
				}
				if _, ok := p.Type.(string); !ok {
					t.Errorf("property %s has type %v, want one plain type", name, p.Type)
				}
			}
			a := tool.Annotations
			if a == nil || a.Title == "" || a.OpenWorldHint == nil || *a.OpenWorldHint {
				t.Fatalf("annotations %+v", a)
			}
			if a.ReadOnlyHint != isReadOnly(tool.Name) {
				t.Errorf("readOnlyHint %v", a.ReadOnlyHint)
			}
			if !a.ReadOnlyHint {
				additive := tool.Name == fsops.ToolInsertTextLines || tool.Name == fsops.ToolAppendTextFile
				if a.DestructiveHint == nil || *a.DestructiveHint == additive {
					t.Errorf("destructiveHint %v", a.DestructiveHint)
				}
			}
		})
	}
}

// TestInvalidArguments checks what the model sees for arguments that do
// not fit the schema: an isError result with code -32600, a message naming
// the problem and a hint listing the accepted arguments; nothing is read or
// written, and the observer still hears of the call.
func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		tool    string
		args    any
		wantMsg string // substring
	}{
		{"unknown argument", fsops.ToolEditTextFile, map[string]any{"path": "/w/a.txt", "old_string": "a", "new_string": "b", "bogus": 1},
			`Invalid arguments for edit_text_file: unexpected additional properties ["bogus"]`},
		{"misspelled argument", fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt", "offset": 3},
			`unexpected additional properties ["offset"]`},
		{"wrong type", fsops.ToolEditTextFile, map[string]any{"path": "/w/a.txt", "old_string": 1, "new_string": "b"},
			`Invalid arguments for edit_text_file: old_string: type: 1 has type "integer", want "string"`},
		{"wrong type integer", fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt", "line": "3"},
			`line: type: 3 has type "string", want "integer"`},
		{"fraction for integer", fsops.ToolReadTextFile, map[string]any{"path": "/w/a.txt", "limit": 2.5},
			`limit: type: 2.5 has type "number", want "integer"`},
		{"missing required", fsops.ToolEditTextFile, map[string]any{"path": "/w/a.txt"},
			`missing properties: ["old_string" "new_string"]`},
		{"no arguments", fsops.ToolWriteTextFile, nil, `missing properties: ["path" "content"]`},
		{"not an object", fsops.ToolWriteTextFile, []string{"/w/a.txt"}, "arguments must be a JSON object"},
		{"null for string", fsops.ToolWriteTextFile, map[string]any{"path": "/w/a.txt", "content": nil},
			`content: type: null has type "null", want "string"`},
		{"nested wrong type", fsops.ToolMultiEditTextFile, map[string]any{"path": "/w/a.txt", "edits": []any{map[string]any{"old_string": "a", "new_string": 2}}},
			`edits[].new_string: type: 2 has type "integer", want "string"`},
		{"nested unknown argument", fsops.ToolMultiEditTextFile, map[string]any{"path": "/w/a.txt", "edits": []any{map[string]any{"old_string": "a", "new_string": "b", "replace_all": true}}},
			`unexpected additional properties ["replace_all"]`},
		{"lines not integers", fsops.ToolReplaceTextLines, map[string]any{"path": "/w/a.txt", "hash": sha("a\n"), "lines": []any{"1", "2"}, "old": "a\n", "new": "b\n"},
			`lines[]: type: 1 has type "string", want "integer"`},
		// Caught by the engine rather than the schema, with the seed wording.
		{"empty old_string", fsops.ToolEditTextFile, map[string]any{"path": "/w/a.txt", "old_string": "", "new_string": "b"}, "old_string"},
		{"relative path read", fsops.ToolReadTextFile, map[string]any{"path": "w/a.txt"}, "Path must be absolute: w/a.txt"},
		{"relative path edit", fsops.ToolEditTextFile, map[string]any{"path": "a.txt", "old_string": "a", "new_string": "b"}, "Path must be absolute: a.txt"},
		{"relative path multi", fsops.ToolMultiEditTextFile, map[string]any{"path": "./a.txt", "edits": []any{map[string]any{"old_string": "a", "new_string": "b"}}}, "Path must be absolute: ./a.txt"},
		{"relative path append", fsops.ToolAppendTextFile, map[string]any{"path": "a.txt", "hash": sha("a\n"), "content": "b\n"}, "Path must be absolute: a.txt"},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					mem := fsopstest.NewMemFiles()
					setFile(mem, "/w/a.txt", "a\n")
					rec := &recorder{}
					cs := tr.connect(t, NewServer(fsops.NewEngine(mem), rec))
					res, sc := call(t, cs, tt.tool, tt.args)
					code, msg, hint := toolErr(t, res, sc)
					if code != fsops.CodeInvalidRequest {
						t.Errorf("code %d, want %d", code, fsops.CodeInvalidRequest)
					}
					if !strings.Contains(msg, tt.wantMsg) {
						t.Errorf("message %q, want it to contain %q", msg, tt.wantMsg)
					}
					if strings.HasPrefix(msg, "Invalid arguments") && !strings.Contains(hint, "path (string, required)") {
						t.Errorf("hint %q does not list the arguments", hint)
					}
					if got, _ := getFile(mem, "/w/a.txt"); got != "a\n" {
						t.Errorf("file = %q", got)
					}
					if strings.Join(rec.kinds(), ",") != "started,finished" {
						t.Errorf("events %v, want started,finished", rec.kinds())
					}
				})
			}
		})
	}
}

func TestArgumentsHint(t *testing.T) {
	t.Parallel()
	got := argumentsHint(fsops.ToolMultiEditTextFile, specs()[3].schema)
	want := "Call multi_edit_text_file again with exactly these arguments: path (string, required), " +
		"edits (array of {old_string, new_string}, required), expected_hash (string, optional). " +
		"Other arguments are not accepted; paths must be absolute."
	if got != want {
		t.Errorf("hint\n%s\nwant\n%s", got, want)
	}
}

func TestPlainValidationError(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`validating root: required: missing properties: ["a"]`, `required: missing properties: ["a"]`},
		{`validating root: validating /properties/old_string: type: 1 has type "integer", want "string"`,
			`old_string: type: 1 has type "integer", want "string"`},
		{`validating root: validating /properties/edits: validating /properties/edits/items: validating /properties/edits/items/properties/new_string: type: x`,
			`edits[].new_string: type: x`},
		{"something else", "something else"},
	}
	for _, tt := range tests {
		if got := plainValidationError(tt.in); got != tt.want {
			t.Errorf("plainValidationError(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestArgumentsPath(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"path":"/a/./b/../c.txt"}`, "/a/c.txt"},
		{`{"path":"rel/x"}`, "rel/x"},
		{`{"path":3}`, ""},
		{`{}`, ""},
		{`[1]`, ""},
		{``, ""},
	}
	for _, tt := range tests {
		if got := parseArguments(json.RawMessage(tt.in)).path(); got != tt.want {
			t.Errorf("path of %s = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDefaultHints(t *testing.T) {
	t.Parallel()
	codes := []int{fsops.CodeNotFound, fsops.CodePermission, fsops.CodeIsDirectory, fsops.CodeBinary, fsops.CodeDiskFull,
		fsops.CodeStringNotFound, fsops.CodeMatchCount, fsops.CodeConflict, fsops.CodeStale, fsops.CodeOldMismatch,
		fsops.CodeAnchorMismatch, fsops.CodeInvalidRequest, -32603}
	seen := make(map[string]bool)
	for _, c := range codes {
		e := toolError(&fsops.Error{Code: c, Message: "m"})
		if e.Hint == "" || seen[e.Hint] {
			t.Errorf("code %d: hint %q empty or shared", c, e.Hint)
		}
		seen[e.Hint] = true
	}
	orig := &fsops.Error{Code: fsops.CodeStale, Message: "m", Hint: "engine hint"}
	if e := toolError(orig); e.Hint != "engine hint" || e == orig {
		t.Errorf("toolError kept hint %q, copied %v", e.Hint, e != orig)
	}
	if e := toolError(context.Canceled); e.Code != -32603 || e.Hint == "" {
		t.Errorf("cancelled: %+v", e)
	}
}

// TestDocsListEveryArgument keeps docs/mcp.md in step with the schemas.
func TestDocsListEveryArgument(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range specs() {
		s := spec.schema
		var row string
		for _, line := range strings.Split(string(doc), "\n") {
			if strings.HasPrefix(line, "| `"+spec.tool.Name+"` |") {
				row = line
			}
		}
		if row == "" {
			t.Errorf("docs/mcp.md has no table row for %s", spec.tool.Name)
			continue
		}
		for name := range s.Properties {
			if !strings.Contains(row, "`"+name+"`") {
				t.Errorf("docs/mcp.md: %s row lacks argument %s", spec.tool.Name, name)
			}
		}
	}
}

// A rejected value of a megabyte is not quoted back whole.
func TestValidationErrorCapped(t *testing.T) {
	t.Parallel()
	msg := plainValidationError("validating root: validating /properties/content: type: " + strings.Repeat("x", 1<<20) + " has type array, want string")
	if len(msg) > 2*maxValidationMessage {
		t.Fatalf("message of %d bytes", len(msg))
	}
}

// Each tool's input schema goes out as the schema its arguments are
// validated against: marshalled once, when the tool set is built, not by
// every session's server (BenchmarkNewServer) and every tools/list.
func TestToolsSendTheirSchema(t *testing.T) {
	t.Parallel()
	for _, spec := range specs() {
		raw, ok := spec.tool.InputSchema.(json.RawMessage)
		if !ok {
			t.Errorf("%s: input schema is a %T, want it marshalled once (json.RawMessage)", spec.tool.Name, spec.tool.InputSchema)
			continue
		}
		want, err := json.Marshal(spec.schema)
		if err != nil {
			t.Fatal(err)
		}
		var sent jsonschema.Schema // and it is a schema
		if err := json.Unmarshal(raw, &sent); err != nil {
			t.Fatalf("%s: %v", spec.tool.Name, err)
		}
		if got := []byte(raw); !bytes.Equal(got, want) {
			t.Errorf("%s sends\n%s\nwant\n%s", spec.tool.Name, got, want)
		}
	}
}
