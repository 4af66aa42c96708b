package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/record"
)

// ResultMismatchPrefix names the files in the state directory
// (CODEXACP_FAKE_STATE) in which the fake reports a tool result that
// differs from the recorded one: ResultMismatchPrefix + the transcript
// position of the mcp_call. The replay harness fails a replay that left
// any (e2e/replay reads them; the name is repeated there).
const ResultMismatchPrefix = "tool-result-"

// recordedResults maps each recorded tool call (its call id) to the
// mcp_result entry that says what went back to codex.
func recordedResults(entries []record.Entry) map[string]*record.Entry {
	results := map[string]*record.Entry{}
	for i := range entries {
		if e := &entries[i]; e.Kind == record.KindMCPResult && e.Call != "" {
			results[e.Call] = e
		}
	}
	return results
}

// checkResult compares what a tool call returned (res, or the call's error)
// with the recorded result rec (nil when the recording has none: it ended
// before the result; one with neither result nor tool_error, or a result
// the recorder could not encode, says nothing either). It returns "" when they match, else the difference
// with both results.
//
// What the model reads of a result is its structuredContent (the tool's
// result, or {"error": {code, message, hint}} with isError); the text
// content is a summary of it and is not recorded. Both are compared as JSON
// values after the volatile parts are set aside (see resultValue and
// sameValue).
func checkResult(rec *record.Entry, res *mcpsdk.CallToolResult, callErr error) string {
	if rec == nil || rec.Error != "" || rec.ToolError == nil && len(rec.Result) == 0 {
		return "" // nothing recorded to compare with
	}
	var want any
	if rec.ToolError != nil {
		want = map[string]any{"isError": true, "structuredContent": map[string]any{"error": rec.ToolError}}
	} else {
		want = map[string]any{"structuredContent": rec.Result}
	}
	var got any
	switch {
	case callErr != nil:
		got = map[string]any{"callError": callErr.Error()}
	case res == nil:
		got = map[string]any{}
	case res.IsError:
		got = map[string]any{"isError": true, "structuredContent": res.StructuredContent}
	default:
		got = map[string]any{"structuredContent": res.StructuredContent}
	}
	w, g := resultValue(want), resultValue(got)
	var diffs []string
	sameValue("", w, g, &diffs)
	if len(diffs) == 0 {
		return ""
	}
	head := fmt.Sprintf("the result of %s (call %s) differs from the recording", rec.Tool, rec.Call)
	ws, gs := indent(w), indent(g)
	if len(ws)+len(gs) <= maxShownResults {
		return fmt.Sprintf("%s\nrecorded:\n%s\nreplayed:\n%s", head, ws, gs)
	}
	return fmt.Sprintf("%s (%d and %d bytes as JSON; what differs, recorded then replayed):\n%s", head, len(ws), len(gs), strings.Join(diffs, "\n"))
}

// maxShownResults is how long the two results may be together to be shown
// whole; of longer ones (a big file read) only the differing values are.
const maxShownResults = 8 << 10

// volatileKeys are result fields holding wall-clock times, which differ
// from run to run: none of the file tools returns one today, but a result
// that gains one must not fail every replay.
var volatileKeys = map[string]bool{"updatedAt": true, "createdAt": true, "timestamp": true, "mtime": true, "modified": true}

// tempPath matches a directory in the system's temporary directory whose
// name has a digit (os.MkdirTemp's random part): a path the replay harness
// did not map (the workspace root, the state directory and codex's home are
// already the replay's own in the transcript the fake reads), which changes
// with every run.
var tempPath = regexp.MustCompile(regexp.QuoteMeta(strings.TrimRight(filepath.ToSlash(os.TempDir()), "/")) + `/[^/"\s]*[0-9][^/"\s]*`)

// randomIDs are ids the agent draws at random: session ids and tool call
// ids (as in e2e/replay's normalisation).
var randomIDs = regexp.MustCompile(`\b(sess_|acp_)[0-9a-f]{8,}\b`)

// resultValue is v as a JSON value (maps, slices, strings, json.Number,
// bools, nil) with random temporary directories replaced by $TMP and random
// ids numbered by first appearance (sess_1, acp_1), as the harness does for
// the agent's messages.
func resultValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	b = tempPath.ReplaceAllLiteral(b, []byte("$TMP"))
	ids, next := map[string]string{}, map[string]int{}
	b = randomIDs.ReplaceAllFunc(b, func(id []byte) []byte {
		if p, ok := ids[string(id)]; ok {
			return []byte(p)
		}
		prefix := string(randomIDs.FindSubmatch(id)[1])
		next[prefix]++
		p := fmt.Sprintf("%s%d", prefix, next[prefix])
		ids[string(id)] = p
		return []byte(p)
	})
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return string(b)
	}
	return tree
}

// sameValue compares a recorded JSON value with a replayed one and adds a
// line to diffs for each place where they differ. A recorded string
// "[REDACTED]" (a secret the recorder blanked) matches any string, and
// volatileKeys any string value.
func sameValue(path string, want, got any, diffs *[]string) {
	differ := func() { *diffs = append(*diffs, describe(path, want, got)) }
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			differ()
			return
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			at := k
			if path != "" {
				at = path + "." + k
			}
			wv, inW := w[k]
			gv, inG := g[k]
			_, wStr := wv.(string)
			_, gStr := gv.(string)
			switch {
			case !inW || !inG:
				*diffs = append(*diffs, describeMissing(at, wv, inW, gv, inG))
			case volatileKeys[k] && wStr && gStr:
			default:
				sameValue(at, wv, gv, diffs)
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			differ()
			return
		}
		for i := range w {
			sameValue(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], diffs)
		}
	case string:
		if g, ok := got.(string); !ok || w != g && w != record.Redacted {
			differ()
		}
	default:
		if want != got { // json.Number, bool, nil
			differ()
		}
	}
}

// describe says how the values at path differ: two long texts as a unified
// diff of their lines, anything else as both values in JSON (each cut to
// maxShownValue bytes).
func describe(path string, want, got any) string {
	w, wok := want.(string)
	g, gok := got.(string)
	if wok && gok && len(w)+len(g) > maxShownValue {
		d := fsops.UnifiedDiff(path, []byte(w), []byte(g))
		if _, rest, ok := strings.Cut(d, "\n"); ok { // fsops's "--- path" / "+++ path"
			if _, rest, ok = strings.Cut(rest, "\n"); ok {
				d = rest
			}
		}
		return fmt.Sprintf("%s: the texts differ (%d and %d bytes):\n--- recorded\n+++ replayed\n%s", path, len(w), len(g), cut(d, maxShownDiff))
	}
	return fmt.Sprintf("%s: recorded %s, replayed %s", path, cut(compact(want), maxShownValue), cut(compact(got), maxShownValue))
}

func describeMissing(path string, want any, inW bool, got any, inG bool) string {
	if !inW {
		return fmt.Sprintf("%s: not recorded, replayed %s", path, cut(compact(got), maxShownValue))
	}
	return fmt.Sprintf("%s: recorded %s, not replayed", path, cut(compact(want), maxShownValue))
}

// Limits of what a long difference shows.
const (
	maxShownValue = 1 << 10
	maxShownDiff  = 8 << 10
)

func compact(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func indent(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// cut shortens s to about max bytes, on a UTF-8 boundary, saying how much
// it left out.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:i], len(s)-i)
}

// reportMismatch tells the harness (a file in the state directory, see
// ResultMismatchPrefix) and the agent's log (stderr) that the tool call at
// transcript position index returned another result than recorded.
func (r *replayer) reportMismatch(run, index int, diff string) {
	msg := fmt.Sprintf("fakecodex: run %d, transcript line %d: %s", run, index+1, diff)
	fmt.Fprintln(r.stderr, msg)
	if r.state == "" {
		return
	}
	name := filepath.Join(r.state, fmt.Sprintf("%s%d", ResultMismatchPrefix, index))
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, []byte(msg+"\n"), 0o644); err == nil {
		err = os.Rename(tmp, name)
		if err != nil {
			fmt.Fprintf(r.stderr, "fakecodex: %v\n", err)
		}
	} else {
		fmt.Fprintf(r.stderr, "fakecodex: %v\n", err)
	}
}
