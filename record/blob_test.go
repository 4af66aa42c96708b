package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/fsops"
)

// bigSession records, as an agent would, a session with a catalog of 40
// models, a skills listing given twice, a session/new answer with the
// model picker sent twice and a file of 80 lines (with a password in it)
// whose content is in three entries.
func bigSession(t *testing.T) (data []byte, content string) {
	t.Helper()
	var buf bytes.Buffer
	rec := New(&buf)
	var models []codex.Model
	for i := range 40 {
		models = append(models, codex.Model{Slug: fmt.Sprintf("gpt-%d", i), Name: fmt.Sprintf("GPT %d", i),
			Description: fmt.Sprintf("Model number %d, for work of every kind.", i), ContextWindow: 272000,
			DefaultEffort: "medium", Efforts: []string{"low", "medium", "high"}})
	}
	rec.SetCatalog(models, "gpt-1", "")
	rec.Start("codexacp test", 272000)

	var skills []codex.Skill
	for i := range 12 {
		skills = append(skills, codex.Skill{Name: fmt.Sprintf("skill-%d", i), Path: fmt.Sprintf("/w/.agents/skills/s%d/SKILL.md", i),
			Scope: "repo", Description: strings.Repeat(fmt.Sprintf("Skill %d does a thing worth describing at length. ", i), 6)})
	}
	list := rec.Skills(func(context.Context, string) ([]codex.Skill, error) { return skills, nil })
	var options []map[string]string
	for _, m := range models {
		options = append(options, map[string]string{"value": m.Slug, "name": m.Name, "description": m.Description})
	}
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "result": map[string]any{
		"sessionId": "sess_1", "configOptions": []any{map[string]any{"id": "model", "currentValue": "gpt-1", "options": options}}}})
	out := rec.Output(&bytes.Buffer{})
	for range 2 {
		if _, err := list(context.Background(), "/w"); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(out, "%s\n", answer)
	}

	var lines []string
	for i := range 80 {
		lines = append(lines, fmt.Sprintf("line %d of a file with the password hunter2 in it", i))
	}
	content = strings.Join(lines, "\n") + "\n"
	rec.write(&Entry{Kind: KindFile, Run: 1, Path: "/w/a.txt", Exists: true, ParentExists: true, Mode: 0o644, Content: &content})
	read, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "result": map[string]any{"content": content}})
	fmt.Fprintf(out, "%s\n", read)
	result, _ := json.Marshal(map[string]any{"content": content, "hash": fsops.HashOf([]byte(content)), "start_line": 1, "end_line": 80, "total_lines": 80})
	rec.write(&Entry{Kind: KindMCPResult, Run: 1, Session: "sess_1", Call: "acp_1", Tool: "read_text_file", Result: result})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), content
}

// checkBound fails for each line longer than MaxLine.
func checkBound(t *testing.T, data []byte) {
	t.Helper()
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(line) > MaxLine {
			t.Errorf("line %d has %d bytes (bound %d): %.200s…", i+1, len(line), MaxLine, line)
		}
	}
}

// checkReadsBack checks that every entry Read gives, encoded again, is
// its line of the transcript with the blobs put back.
func checkReadsBack(t *testing.T, data []byte) []Entry {
	t.Helper()
	entries, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	expanded, err := Expand(data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range entries {
		if entries[i].Kind == KindBlob {
			continue
		}
		b, err := Encode(&entries[i])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	if strings.Join(got, "") != string(expanded) {
		t.Errorf("the entries read do not encode to the expanded transcript")
	}
	return entries
}

func TestRecorderStoresLargePayloadsOnce(t *testing.T) {
	data, content := bigSession(t)
	checkBound(t, data)
	for _, c := range []struct {
		text string
		max  int
	}{
		{`Model number 7, for work`, 2},                      // the catalog, the picker (sent twice)
		{`Skill 3 does a thing`, 6},                          // the listing given twice: once, its description repeated 6 times
		{`line 42 of a file`, 1},                             // the file, the editor's answer, the tool's result
		{`"kind":"blob"`, strings.Count(string(data), "\n")}, // some blobs
	} {
		if n := strings.Count(string(data), c.text); n > c.max || n == 0 {
			t.Errorf("%q is written %d times, want 1 to %d", c.text, n, c.max)
		}
	}
	entries := checkReadsBack(t, data)
	var skills, files, results int
	for _, e := range entries {
		switch {
		case e.Kind == KindStart && len(e.Models) != 40:
			t.Errorf("%d models read back, want 40", len(e.Models))
		case e.Kind == KindSkills:
			skills++
			if len(e.Skills) != 12 || e.Skills[11].Name != "skill-11" {
				t.Errorf("skills read back: %+v", e.Skills)
			}
		case e.Kind == KindFile:
			files++
			if e.Content == nil || *e.Content != content {
				t.Errorf("the file's content does not read back")
			}
		case e.Kind == KindMCPResult:
			results++
			var r struct{ Content string }
			if err := json.Unmarshal(e.Result, &r); err != nil || r.Content != content {
				t.Errorf("the tool's result does not read back (%v)", err)
			}
		}
	}
	if skills != 2 || files != 1 || results != 1 {
		t.Errorf("read %d skills, %d file, %d result entries; want 2, 1, 1", skills, files, results)
	}
}

// TestReadFormat1 reads a transcript of the form recorded before blobs
// (long lines, format 1): as it was; Write stores it in the current form,
// which reads back to the same entries.
func TestReadFormat1(t *testing.T) {
	var commands []any
	for i := range 60 {
		commands = append(commands, map[string]string{"name": fmt.Sprint("c", i), "description": "a command with a description of some length, <as the editor shows it>"})
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{
		"sessionId": "sess_1", "update": map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": commands}}})
	old := `{"t":0,"kind":"start","format":1,"agent":"codexacp old","context_window":1000}` + "\n" +
		`{"t":1,"kind":"acp","dir":"out","msg":` + string(msg) + "}\n"
	if x, err := Expand([]byte(old)); err != nil || string(x) != old {
		t.Errorf("Expand changed a transcript without blobs (%v)", err)
	}
	entries := checkReadsBack(t, []byte(old))
	if len(entries) != 2 || !bytes.Equal(entries[1].Msg, msg) {
		t.Fatalf("format 1 read as %+v", entries)
	}
	var buf bytes.Buffer
	if err := Write(&buf, entries); err != nil {
		t.Fatal(err)
	}
	checkBound(t, buf.Bytes())
	again := checkReadsBack(t, buf.Bytes())
	var msgs []json.RawMessage
	for _, e := range again {
		if e.Kind == KindStart && e.Format != FormatVersion {
			t.Errorf("Write kept format %d", e.Format)
		}
		if e.Kind == KindACP {
			msgs = append(msgs, e.Msg)
		}
	}
	if len(msgs) != 1 || !bytes.Equal(msgs[0], msg) {
		t.Errorf("the message does not read back from the current form:\n%s", buf.Bytes())
	}
}

func TestReadRejectsBrokenBlobs(t *testing.T) {
	start := `{"t":0,"kind":"start","format":2,"agent":"a","context_window":1}` + "\n"
	use := func(id string) string {
		return `{"t":1,"kind":"acp","dir":"out","msg":{"x":{"$blob":"` + id + `"}}}` + "\n"
	}
	blob := func(id, field, v string) string {
		return `{"t":1,"kind":"blob","id":"` + id + `","` + field + `":` + v + "}\n"
	}
	for _, c := range []struct{ name, text, want string }{
		{"missing", start + use("aaaaaaaaaaaa"), "no blob aaaaaaaaaaaa"},
		{"twice", start + blob("b1", "value", "1") + blob("b1", "value", "1") + use("b1"), "stored again"},
		{"apart", start + blob("b1", "items", "[1]") + use("b1") + blob("b1", "items", "[2]"), "stored again"},
		{"two forms", start + blob("b1", "items", "[1]") + blob("b1", "text", `"x"`) + use("b1"), "text after items"},
		{"itself", start + blob("b1", "value", `{"$blob":"b1"}`) + use("b1"), "contains itself"},
		{"no value", start + `{"t":1,"kind":"blob","id":"b1"}` + "\n", "holds no"},
		{"wrong type", start + blob("b1", "items", `"x"`), "wrong type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Read: %v, want an error with %q", err, c.want)
			}
		})
	}
	// A blob may come after its use (a start entry's do), and its parts
	// join.
	ok := start + use("b2") + blob("b2", "text", `"ab\n"`) + blob("b2", "text", `"c"`)
	entries, err := Read(strings.NewReader(ok))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(entries[1].Msg); got != `{"x":"ab\nc"}` {
		t.Errorf("read %s", got)
	}
	if e := entries[2]; e.Kind != KindBlob || e.ID != "b2" {
		t.Errorf("a blob line read as %+v", e)
	}
}

// TestScrubAcrossBlobs replaces a password in a file stored once as a
// blob: every use has the new text, the hashes are recomputed, and the
// transcript keeps its form.
func TestScrubAcrossBlobs(t *testing.T) {
	data, content := bigSession(t)
	res, err := Scrub(data, []Replacement{{Old: "hunter2", New: "xxxxxxx"}})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(res.Data, []byte("hunter2")) {
		t.Errorf("the password is still in the scrubbed transcript")
	}
	if res.Hashes != 1 || len(res.Unknown) != 0 {
		t.Errorf("%d hashes recomputed, unknown %v; want 1, none", res.Hashes, res.Unknown)
	}
	checkBound(t, res.Data)
	if n := bytes.Count(res.Data, []byte("line 42 of a file")); n != 1 {
		t.Errorf("the file's content is written %d times, want once", n)
	}
	scrubbed := strings.ReplaceAll(content, "hunter2", "xxxxxxx")
	for _, e := range checkReadsBack(t, res.Data) {
		switch e.Kind {
		case KindFile:
			if *e.Content != scrubbed {
				t.Errorf("file content not scrubbed")
			}
		case KindMCPResult:
			var r struct{ Content, Hash string }
			json.Unmarshal(e.Result, &r)
			if r.Content != scrubbed || r.Hash != fsops.HashOf([]byte(scrubbed)) {
				t.Errorf("result not scrubbed, or its hash not recomputed: %s", e.Result)
			}
		case KindACP:
			if bytes.Contains(e.Msg, []byte(`"content"`)) && !bytes.Contains(e.Msg, []byte("xxxxxxx")) {
				t.Errorf("the editor's answer not scrubbed")
			}
		}
	}
	// Lines nothing changed in stay as they were: the catalog's blob.
	if first := bytes.SplitAfter(data, []byte("\n"))[1]; !bytes.Contains(res.Data, first) {
		t.Errorf("an unchanged blob line changed: %.100s", first)
	}
}

func TestPackText(t *testing.T) {
	for _, c := range []struct {
		name, body string
		budget     int
		want       []string
	}{
		{"lines", `ab\ncd\nef`, 4, []string{`ab\n`, `cd\n`, `ef`}},
		{"packed", `ab\ncd\nef`, 8, []string{`ab\ncd\n`, `ef`}},
		{"escaped backslash then n is no newline", `ab\\ncd`, 3, []string{`ab\\ncd`}},
		{"a JSON text's newline", `{\"a\":\"x\\ny\\nz\"}`, 12, []string{`{\"a\":\"x\\n`, `y\\nz\"}`}},
		{"a JSON text's newline, after a line", `ab\n{\"a\":\"x\\ny\"}`, 12, []string{`ab\n`, `{\"a\":\"x\\n`, `y\"}`}},
		{"a JSON text's escaped backslash", `{\"a\":\"x\\\\ny\"}`, 8, []string{`{\"a\":\"x\\\\ny\"}`}},
		{"too long, no break", `abcdefgh`, 3, []string{`abcdefgh`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, p := range packText([]byte(c.body), c.budget) {
				got = append(got, string(p))
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("packText(%s, %d) = %q, want %q", c.body, c.budget, got, c.want)
			}
		})
	}
}

// BenchmarkCompactLine measures what storing blobs adds to each line a
// Recorder writes: a streamed delta (no blob), and a 4 KB list of
// commands sent again (a reference to the blob stored the first time).
func BenchmarkCompactLine(b *testing.B) {
	delta := []byte(`{"t":323.086,"kind":"appserver","dir":"in","msg":{"method":"item/agentMessage/delta","params":{"threadId":"01a20ff0-d338-7d11-b6b0-b55580cfde52","turnId":"01a210e9-9373-7d11-b6b0-b55580cfde52","itemId":"msg_6","delta":"Hello fr"},"emittedAtMs":1795580072926},"run":1}`)
	var commands []any
	for i := range 30 {
		commands = append(commands, map[string]string{"name": fmt.Sprint("command-", i), "description": "a command of the agent, as the editor shows it in its list of slash commands"})
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{
		"sessionId": "sess_1", "update": map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": commands}}})
	update := []byte(`{"t":1,"kind":"acp","dir":"out","msg":` + string(msg) + `}`)
	for _, c := range []struct {
		name string
		line []byte
	}{{"delta", delta}, {"commands-again", update}} {
		b.Run(c.name, func(b *testing.B) {
			comp := newCompactor()
			comp.line(c.line)
			b.SetBytes(int64(len(c.line)))
			for b.Loop() {
				comp.line(c.line)
			}
		})
	}
}
