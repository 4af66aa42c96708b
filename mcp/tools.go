package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/lazyregexp"
	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolSpec is one tool: what tools/list shows and how a call runs.
type toolSpec struct {
	// tool's InputSchema is schema as JSON, marshalled once: the go-sdk
	// marshals a *jsonschema.Schema again at every AddTool (each session's
	// server) and every tools/list, and a schema marshals slowly.
	tool   *mcpsdk.Tool
	schema *jsonschema.Schema
	// run decodes and validates raw arguments and calls the engine. Invalid
	// arguments come back as a CodeInvalidRequest *fsops.Error.
	run func(ctx context.Context, e *fsops.Engine, args *arguments, before fsops.BeforeWrite) (any, error)
}

// Shared wording, so that the descriptions agree with each other.
const (
	descPath         = "Absolute path of the file (relative paths are rejected)."
	descExpectedHash = "Optional but recommended: the `hash` from your last read_text_file (or edit) of this file. The call fails with a stale-content error instead of overwriting changes made since then."
	descLineHash     = "Required: the `hash` from your last read_text_file (or edit) of this file. If the file changed since, the call fails; read it again and retry with the new hash."
	errorShape       = "On failure the result is {\"error\": {\"code\", \"message\", \"hint\"}}: follow the hint."
)

// specs builds the tool set once; schemas and descriptions are immutable and
// shared by every per-session server.
var specs = sync.OnceValue(func() []toolSpec {
	rw := func(destructive, idempotent bool) *mcpsdk.ToolAnnotations {
		return &mcpsdk.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: new(false)}
	}
	return []toolSpec{
		defineTool(fsops.ToolReadTextFile, "Read file",
			"Read a text file through the user's editor (open buffers with unsaved changes included). "+
				fmt.Sprintf("Returns `content` (the raw text, without line numbers: up to `limit` lines from `line`, at most %d KiB), ", fsops.MaxReadBytes>>10)+
				"`hash` (SHA-256 of the whole file), `total_lines`, `start_line`/`end_line` (1-based, inclusive) "+
				"and `has_more` (with a `hint` saying how to read on). "+
				"Read a file before you edit it and pass its `hash` to the edit tools (`expected_hash`, or `hash` for the line tools). "+
				errorShape,
			&mcpsdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)},
			map[string]string{
				"path":  descPath,
				"line":  "First line to return, 1-based; negative counts from the end (-1 = last line). Default 1.",
				"limit": fmt.Sprintf("Maximum number of lines to return. Default %d.", fsops.DefaultReadLimit),
			},
			readTextFile),
		defineTool(fsops.ToolWriteTextFile, "Write file",
			"Create a file, or replace the whole content of an existing one. Use it for new files and complete rewrites; "+
				"for changes inside an existing file prefer edit_text_file or multi_edit_text_file (smaller, reviewable diffs). "+
				"The parent directory must exist, unless you set `create_parents`: then missing directories inside the workspace are created with the file (no shell needed). "+
				"Returns `success`, `bytes_written`, `created`, the file's new `hash` and `total_lines`, and `created_dirs` when directories were made. "+
				errorShape,
			rw(true, true),
			map[string]string{
				"path":          descPath,
				"content":       "The complete new content of the file, exactly as it should be on disk (include the final newline if the file should end with one).",
				"expected_hash": descExpectedHash + " Omit when creating a new file.",
				"create_parents": "Optional, default false: create the file's missing parent directories (like mkdir -p), inside the workspace only. " +
					"They are created together with the file, once the write is approved; nothing is created if it is not. " +
					"Without it, writing into a directory that does not exist fails with \"Parent directory not found\".",
			},
			(*fsops.Engine).WriteTextFile),
		defineTool(fsops.ToolEditTextFile, "Edit file",
			"Replace one exact piece of text in an existing file: the preferred tool for a small change. "+
				"`old_string` must match the file exactly (whitespace, indentation and line breaks included) and occur exactly once "+
				"(or exactly `expected_replacements` times, which replaces all of them); add surrounding lines to make it unique. "+
				"For several changes to one file use multi_edit_text_file. "+
				"Returns `success`, a unified `diff`, `line_range` (lines of the match in the original, 1-based inclusive), "+
				"`replacements`, and the new `hash` and `total_lines`. "+errorShape,
			rw(true, false),
			map[string]string{
				"path":                  descPath,
				"old_string":            "Exact text to replace; must not be empty and must occur exactly once unless expected_replacements says otherwise.",
				"new_string":            "Replacement text; an empty string deletes old_string. Must differ from old_string.",
				"expected_replacements": "Optional: how many occurrences of old_string to replace (all of them). The edit fails unless old_string occurs exactly this many times. Default 1.",
				"expected_hash":         descExpectedHash,
			},
			(*fsops.Engine).EditTextFile),
		defineTool(fsops.ToolMultiEditTextFile, "Edit file (several changes)",
			"Apply several exact text replacements to one file in a single all-or-nothing step. "+
				"Edits apply in order, each to the text left by the previous ones, and each `old_string` must occur exactly once at that point; "+
				"if any edit fails nothing is written. "+
				"Returns `success`, one unified `diff` (original to final), `applied_count`, `line_ranges` "+
				"(per edit: `edit_index` from 0 and `start`/`end` lines of its match, 1-based inclusive), and the new `hash` and `total_lines`. "+
				errorShape,
			rw(true, false),
			map[string]string{
				"path":               descPath,
				"edits":              "The edits, applied in order (at least one).",
				"edits[].old_string": "Exact text to replace; must occur exactly once in the text as the earlier edits left it.",
				"edits[].new_string": "Replacement text; an empty string deletes old_string.",
				"expected_hash":      descExpectedHash,
			},
			(*fsops.Engine).MultiEditTextFile),
		defineTool(fsops.ToolReplaceTextLines, "Replace lines",
			"Replace a range of whole lines, checked against the hash and the lines' current content. "+
				"Use it after read_text_file when you know the line numbers; for a change located by its text, edit_text_file is simpler. "+
				"Returns the new `hash`, `total_lines` and a unified `diff`. "+errorShape,
			rw(true, false),
			map[string]string{
				"path":  descPath,
				"hash":  descLineHash,
				"lines": "The range [start, end): start is 1-based, end is exclusive; negative numbers count from the end (-1 = last line); end 0 means through the end of the file. Examples: [3, 5] = lines 3 and 4; [-3, 0] = the last three lines.",
				"old":   "The exact current content of those lines; the call fails if the file says something else there.",
				"new":   "Text that replaces those lines; an empty string deletes them.",
			},
			(*fsops.Engine).ReplaceTextLines),
		defineTool(fsops.ToolInsertTextLines, "Insert lines",
			"Insert text before a given line, checked against the hash and that line's current content. "+
				"Returns the new `hash`, `total_lines` and a unified `diff`. To add at the end of a file use append_text_file. "+errorShape,
			rw(false, false),
			map[string]string{
				"path":    descPath,
				"hash":    descLineHash,
				"line":    "The line to insert before, 1-based; negative counts from the end (-1 = last line).",
				"anchor":  "The exact current content of that line; the call fails if the line says something else.",
				"content": "The text to insert before that line.",
			},
			(*fsops.Engine).InsertTextLines),
		defineTool(fsops.ToolAppendTextFile, "Append to file",
			"Add text at the end of an existing file, checked against the hash. "+
				"Returns the new `hash`, `total_lines` and a unified `diff`. "+errorShape,
			rw(false, false),
			map[string]string{
				"path":    descPath,
				"hash":    descLineHash,
				"content": "The text to add at the end of the file.",
			},
			(*fsops.Engine).AppendTextFile),
	}
})

// readTextFile gives ReadTextFile the shape of the writing tools.
func readTextFile(e *fsops.Engine, ctx context.Context, p fsops.ReadParams, _ fsops.BeforeWrite) (*fsops.ReadResult, error) {
	return e.ReadTextFile(ctx, p)
}

// defineTool builds a tool whose input schema is inferred from P and then
// given the descriptions in props (keyed by property name; "a[].b" for a
// property of array a's items). Every property must have a description and
// every description a property: a mismatch is a programming error and panics
// when the tool set is built (which the tests do).
func defineTool[P, R any](name, title, description string, ann *mcpsdk.ToolAnnotations, props map[string]string,
	call func(*fsops.Engine, context.Context, P, fsops.BeforeWrite) (R, error)) toolSpec {
	schema, err := jsonschema.For[P](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %s: %v", name, err))
	}
	used := make(map[string]bool)
	describe(name, schema, "", props, used)
	for k := range props {
		if !used[k] {
			panic(fmt.Sprintf("mcp: %s: description for unknown property %q", name, k))
		}
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: resolving schema of %s: %v", name, err))
	}
	ann.Title = title
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("mcp: marshalling the schema of %s: %v", name, err))
	}
	tool := &mcpsdk.Tool{Name: name, Title: title, Description: description, InputSchema: json.RawMessage(raw), Annotations: ann}
	hint := argumentsHint(name, schema)
	return toolSpec{
		tool:   tool,
		schema: schema,
		run: func(ctx context.Context, e *fsops.Engine, args *arguments, before fsops.BeforeWrite) (any, error) {
			p, err := decodeArguments[P](args, resolved)
			if err != nil {
				return nil, &fsops.Error{
					Code:    fsops.CodeInvalidRequest,
					Message: fmt.Sprintf("Invalid arguments for %s: %v", name, err),
					Hint:    hint,
					Err:     err,
				}
			}
			r, err := call(e, ctx, p, before)
			if err != nil {
				return nil, err
			}
			var zero R
			if any(r) == any(zero) {
				return nil, fmt.Errorf("%s: engine returned neither result nor error", name)
			}
			return r, nil
		},
	}
}

// describe sets descriptions on the properties of an inferred object schema
// and makes optional (pointer or slice) properties plain types: the model
// should see "integer", not ["null", "integer"], and null is never a useful
// value here.
func describe(tool string, s *jsonschema.Schema, prefix string, props map[string]string, used map[string]bool) {
	for name, ps := range s.Properties {
		key := prefix + name
		d, ok := props[key]
		if !ok {
			panic(fmt.Sprintf("mcp: %s: property %q has no description", tool, key))
		}
		used[key] = true
		ps.Description = d
		if len(ps.Types) == 2 && ps.Types[0] == "null" {
			ps.Type, ps.Types = ps.Types[1], nil
		}
		if ps.Items != nil && len(ps.Items.Properties) > 0 {
			describe(tool, ps.Items, key+"[].", props, used)
		}
	}
}

// argumentsHint is the hint for invalid arguments: the exact argument list,
// so the model can retry without guessing.
func argumentsHint(tool string, s *jsonschema.Schema) string {
	var parts []string
	for _, name := range sortedProperties(s) {
		ps := s.Properties[name]
		typ := ps.Type
		if typ == "array" && ps.Items != nil {
			if ps.Items.Type == "object" {
				typ = "array of {" + strings.Join(sortedProperties(ps.Items), ", ") + "}"
			} else {
				typ = "array of " + ps.Items.Type
			}
		}
		req := "optional"
		if slices.Contains(s.Required, name) {
			req = "required"
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", name, typ, req))
	}
	return fmt.Sprintf("Call %s again with exactly these arguments: %s. Other arguments are not accepted; paths must be absolute.",
		tool, strings.Join(parts, ", "))
}

// sortedProperties lists an object schema's properties in the order of the
// Go struct (PropertyOrder), falling back to name order.
func sortedProperties(s *jsonschema.Schema) []string {
	if len(s.PropertyOrder) == len(s.Properties) {
		return s.PropertyOrder
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// arguments are a call's raw arguments, parsed once (they may hold a
// file's whole content).
type arguments struct {
	raw   json.RawMessage
	value any   // raw decoded generically, for validation
	err   error // why raw is not a JSON object
}

// parseArguments parses raw arguments. Missing arguments count as an empty
// object, so that validation names the required properties.
func parseArguments(raw json.RawMessage) *arguments {
	a := &arguments{raw: bytes.TrimSpace(raw)}
	if len(a.raw) == 0 || bytes.Equal(a.raw, []byte("null")) {
		a.raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(a.raw, &a.value); err != nil {
		a.err = fmt.Errorf("arguments are not valid JSON: %w", err)
	} else if _, ok := a.value.(map[string]any); !ok {
		a.err = errors.New("arguments must be a JSON object")
	}
	return a
}

// path returns the "path" argument for reporting, even when the arguments
// are otherwise invalid: cleaned when absolute, as given when not, "" when
// absent or not a string.
func (a *arguments) path() string {
	m, _ := a.value.(map[string]any)
	p, _ := m["path"].(string)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return p
}

// decodeArguments validates arguments against the tool's schema (types,
// required properties, no unknown properties, at every level) and decodes
// them.
func decodeArguments[P any](a *arguments, schema *jsonschema.Resolved) (P, error) {
	var p P
	if a.err != nil {
		return p, a.err
	}
	if err := schema.Validate(a.value); err != nil {
		return p, errors.New(plainValidationError(err.Error()))
	}
	// The schema has checked every field, so this cannot meet unknown ones.
	if err := json.Unmarshal(a.raw, &p); err != nil {
		return p, err
	}
	return p, nil
}

// plainValidationError shortens the validator's nested JSON-pointer wording
// ("validating root: validating /properties/edits: validating
// /properties/edits/items/properties/new_string: type: ...") to the innermost
// property path ("edits[].new_string: type: ...").
func plainValidationError(msg string) string {
	// The validator quotes the rejected value whole: a megabyte of content
	// sent with the wrong type must not come back to the model whole.
	if len(msg) > maxValidationMessage {
		cut := maxValidationMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + fmt.Sprintf("… (%d bytes in all)", len(msg))
	}
	msg = strings.ReplaceAll(msg, "validating root: ", "")
	msg = strings.ReplaceAll(msg, "<invalid reflect.Value>", "null") // how the validator prints JSON null
	locs := validatingPointer.FindAllStringSubmatchIndex(msg, -1)
	if len(locs) == 0 {
		return msg
	}
	last := locs[len(locs)-1]
	var b strings.Builder
	for _, seg := range strings.Split(msg[last[2]:last[3]], "/") {
		switch seg {
		case "", "properties":
		case "items":
			b.WriteString("[]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
		}
	}
	return msg[:locs[0][0]] + b.String() + ": " + msg[last[1]:]
}

// maxValidationMessage bounds an argument validation error.
const maxValidationMessage = 1 << 10

var validatingPointer = lazyregexp.New(`validating (/[^:]*): `)
