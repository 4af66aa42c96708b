package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// Large payloads are stored once. A Recorder keeps every line it writes
// within MaxLine bytes by cutting large values out of it (the model
// catalog, the slash commands with the skills' descriptions, a skills
// listing, a file's content, a stored rollout) into blob entries, written
// just before the line that first uses them (the start entry's just after
// it: a transcript's first line is its start), and leaving in their place a
// reference, {"$blob":"<id>"}. A value already stored is referred to
// wherever it appears again, whatever the size of the line. Read puts every
// value back byte for byte before it decodes a line, so nothing that reads
// a transcript through Read (the replay, the fake codex) sees blobs.
//
// A blob that does not fit in MaxLine is split over consecutive blob lines
// of the same id: an array's elements ("items"), an object's members
// ("members"), a string's text ("text", cut after a newline of the text or,
// for a longer line, after a newline of a JSON text inside it, never inside
// a word or a path); an element too large for a line is a blob of its own.
// A single line of text longer than MaxLine stays whole: it is the only
// kind of line over the bound.

// MaxLine is the longest line a Recorder writes, blob lines too (but for a
// line of text longer than that inside a blob).
const MaxLine = 2048

// minBlob is the smallest value stored as a blob: shorter ones are not
// worth a reference.
const minBlob = 256

// minShared is the size from which a part of a blob (an element of an
// array, a member of an object) is a blob of its own.
const minShared = 512

// blobIDLen is the length of a blob id: that many hex digits of the
// SHA-256 of the value as first stored.
const blobIDLen = 12

// The forms of a blob entry's value.
const (
	blobValue   = "value"   // the whole value
	blobItems   = "items"   // a run of an array's elements
	blobMembers = "members" // a run of an object's members
	blobText    = "text"    // a run of a string's text
)

var (
	refPrefix    = []byte(`{"$blob":"`)
	blobKindText = []byte(`"kind":"blob"`)
)

func blobID(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])[:blobIDLen]
}

func blobRef(id string) []byte { return []byte(`{"$blob":"` + id + `"}`) }

// isRef reports whether n, a value of text, is a blob reference.
func isRef(text []byte, n *jsonNode) bool {
	return n.kind == '{' && len(n.children) == 1 && n.children[0].key == "$blob" && bytes.HasPrefix(text[n.start:], refPrefix)
}

// compactor cuts the large values of transcript lines into blobs.
type compactor struct {
	bound int
	known map[string]bool // ids of the blobs written
}

func newCompactor() *compactor {
	return &compactor{bound: MaxLine, known: map[string]bool{}}
}

// line returns what to write for one encoded entry (line, without its
// newline): the entry with its large values referred to, and the blob
// lines they need, each line ending in a newline. A line that is not a
// JSON object is written as it is.
func (c *compactor) line(line []byte) []byte {
	if len(line) < minBlob {
		return append(line[:len(line):len(line)], '\n')
	}
	root, err := scanJSON(line)
	if err != nil || root.kind != '{' {
		return append(line[:len(line):len(line)], '\n')
	}
	t := []byte("0")
	if n := root.member("t"); n != nil {
		t = line[n.start:n.end]
	}
	kind := root.member("kind")
	start := kind != nil && string(line[kind.start:kind.end]) == `"`+KindStart+`"`

	text := c.reuse(line, root)
	var blobs []byte
	for len(text) > c.bound {
		if root, err = scanJSON(text); err != nil {
			break
		}
		n := c.pick(text, root)
		if n == nil {
			break
		}
		raw := text[n.start:n.end]
		id := blobID(raw)
		blobs = append(blobs, c.blob(id, raw, t)...)
		text = splice(text, n.start, n.end, blobRef(id))
	}
	if len(blobs) == 0 {
		return append(text[:len(text):len(text)], '\n')
	}
	if start {
		return append(append(text[:len(text):len(text)], '\n'), blobs...)
	}
	return append(append(blobs, text...), '\n')
}

func splice(text []byte, start, end int, with []byte) []byte {
	out := make([]byte, 0, len(text)-(end-start)+len(with))
	return append(append(append(out, text[:start]...), with...), text[end:]...)
}

// candidate reports whether a value of a line (not the entry itself) may
// become a blob: an object, array or string of minBlob bytes or more that
// is not a reference.
func candidate(text []byte, n *jsonNode) bool {
	return n.size() >= minBlob && n.kind != 0 && !isRef(text, n)
}

// envelope reports whether n, a member of the entry, is its message (an
// ACP or app-server message, a codex line): what the line is about, never
// a blob itself.
func envelope(n *jsonNode) bool { return n.key == "msg" || n.key == "line" }

// reuse refers to each value of the line that is already a blob.
func (c *compactor) reuse(text []byte, root *jsonNode) []byte {
	if len(c.known) == 0 {
		return text
	}
	var found []*jsonNode
	var walk func(n *jsonNode, top bool)
	walk = func(n *jsonNode, top bool) {
		for _, ch := range n.children {
			if !candidate(text, ch) {
				continue
			}
			if !(top && envelope(ch)) && c.known[blobID(text[ch.start:ch.end])] {
				found = append(found, ch)
				continue
			}
			walk(ch, false)
		}
	}
	walk(root, true)
	for i := len(found) - 1; i >= 0; i-- {
		n := found[i]
		text = splice(text, n.start, n.end, blobRef(blobID(text[n.start:n.end])))
	}
	return text
}

// pick chooses the value to cut out of a line that is too long: the
// largest value under the entry and its message, then, as long as one
// value makes up most of it (a result holding a list, a list holding one
// long text), that value. So a payload goes whole (the catalog, the list
// of commands, a file's content), and a line that repeats it later refers
// to it whole, while the line keeps the fields around it.
func (c *compactor) pick(text []byte, root *jsonNode) *jsonNode {
	largest := func(n *jsonNode) *jsonNode {
		var big *jsonNode
		for _, ch := range n.children {
			if candidate(text, ch) && (big == nil || ch.size() > big.size()) {
				big = ch
			}
		}
		return big
	}
	cur := largest(root)
	if cur != nil && envelope(cur) {
		cur = largest(cur)
	}
	for cur != nil {
		next := largest(cur)
		if next == nil || next.size()*3 < cur.size()*2 {
			break
		}
		cur = next
	}
	return cur
}

// blob returns the lines that store raw as the blob id (none when it is
// stored already), stamped with the time t of the line that uses it.
func (c *compactor) blob(id string, raw, t []byte) []byte {
	return c.blobShared(id, raw, t, true)
}

// blobShared is blob; share says whether the object or array parts of the
// value of minShared bytes or more are blobs of their own (only one level
// down: a part of a part is cut out only when it does not fit).
func (c *compactor) blobShared(id string, raw, t []byte, share bool) []byte {
	if c.known[id] {
		return nil
	}
	c.known[id] = true
	head := []byte(`{"t":` + string(t) + `,"kind":"blob","id":"` + id + `",`)
	single := func(value []byte) []byte {
		return append(append(append(head[:len(head):len(head)], `"`+blobValue+`":`...), value...), "}\n"...)
	}
	if len(raw) < minShared && len(single(raw)) <= c.bound+1 {
		return single(raw)
	}
	n, err := scanJSON(raw)
	if err != nil {
		return single(raw)
	}
	switch n.kind {
	case '[', '{':
		open, closing := `"`+blobItems+`":[`, "]}"
		if n.kind == '{' {
			open, closing = `"`+blobMembers+`":{`, "}}"
		}
		out, parts := c.parts(raw, n, len(head)+len(open)+len(closing), t, share)
		value := append([]byte{n.kind}, bytes.Join(parts, []byte(","))...)
		value = append(value, raw[len(raw)-1])
		if line := single(value); len(line) <= c.bound+1 {
			return append(out, line...)
		}
		for i := 0; i < len(parts); {
			line := append(head[:len(head):len(head)], open...)
			line = append(line, parts[i]...)
			for i++; i < len(parts) && len(line)+1+len(parts[i])+len(closing) <= c.bound; i++ {
				line = append(append(line, ','), parts[i]...)
			}
			out = append(append(out, line...), closing+"\n"...)
		}
		return out
	case '"':
		if line := single(raw); len(line) <= c.bound+1 {
			return line
		}
		return splitString(raw, head, c.bound)
	}
	return single(raw)
}

// parts returns the elements or members of an array or object (n, the
// value raw), with the blobs they need: an element too large for a line
// of overhead bytes besides, one stored already, or (share) an object or
// array of minShared bytes or more, is referred to. A large part of a payload is thus stored once
// for all its variants (the model picker of each fast-mode choice).
func (c *compactor) parts(raw []byte, n *jsonNode, overhead int, t []byte, share bool) (out []byte, parts [][]byte) {
	parts = make([][]byte, 0, len(n.children))
	for _, ch := range n.children {
		prefix := []byte(nil)
		if ch.keyStart >= 0 {
			prefix = raw[ch.keyStart:ch.start]
		}
		value := raw[ch.start:ch.end]
		if candidate(raw, ch) {
			id := blobID(value)
			shared := share && ch.kind != '"' && ch.size() >= minShared
			if c.known[id] || shared || overhead+len(prefix)+len(value) > c.bound {
				out = append(out, c.blobShared(id, value, t, false)...)
				value = blobRef(id)
			}
		}
		parts = append(parts, append(prefix[:len(prefix):len(prefix)], value...))
	}
	return out, parts
}

// splitString stores a string over several lines, each holding a run of
// its text, cut after a newline.
func splitString(raw, head []byte, bound int) []byte {
	body := raw[1 : len(raw)-1]
	open, closing := `"`+blobText+`":"`, "\"}"
	budget := bound - len(head) - len(open) - len(closing)
	var out []byte
	for _, piece := range packText(body, budget) {
		out = append(append(append(append(out, head...), open...), piece...), closing+"\n"...)
	}
	return out
}

// packText cuts the text of a JSON string (body, escapes as written) into
// runs of at most budget bytes, cut after its newlines (the \n escape); a
// line longer than budget that is a JSON text (a rollout's line) is cut
// after the newlines of the strings inside it (\\n, a \n escape of that
// text); another stays whole.
func packText(body []byte, budget int) [][]byte {
	lines, inner := textBreaks(body)
	var segments [][]byte
	last := 0
	cut := func(end int) {
		from := last
		last = end
		if end-from > budget && (body[from] == '{' || body[from] == '[') {
			for _, p := range inner {
				if from < p && p < end {
					segments = append(segments, body[from:p])
					from = p
				}
			}
		}
		segments = append(segments, body[from:end])
	}
	for _, p := range lines {
		cut(p)
	}
	if last < len(body) {
		cut(len(body))
	}
	var runs [][]byte
	var run []byte
	for _, seg := range segments {
		if len(run) > 0 && len(run)+len(seg) > budget {
			runs = append(runs, run)
			run = nil
		}
		run = append(run, seg...)
	}
	if len(run) > 0 {
		runs = append(runs, run)
	}
	return runs
}

// textBreaks finds, in the text of a JSON string (escapes as written), the
// offsets just after each newline of the text (lines), and just after each
// \n escape of a JSON text written inside the text (inner: the decoded
// text has a backslash, not itself escaped, before an n).
func textBreaks(body []byte) (lines, inner []int) {
	run := 0 // backslashes in a row in the decoded text
	for i := 0; i < len(body); {
		if body[i] != '\\' {
			if body[i] == 'n' && run%2 == 1 {
				inner = append(inner, i+1)
			}
			run = 0
			i++
			continue
		}
		if i+1 >= len(body) {
			break
		}
		switch body[i+1] {
		case 'n':
			lines = append(lines, i+2)
			run = 0
			i += 2
		case '\\':
			run++
			i += 2
		case 'u':
			if i+6 <= len(body) && bytes.EqualFold(body[i+2:i+6], []byte("005c")) {
				run++
			} else {
				run = 0
			}
			i += 6
		default:
			run = 0
			i += 2
		}
	}
	return lines, inner
}

// compactText stores the large values of a transcript's lines (written
// without blobs) as blobs, as a Recorder does.
func compactText(data []byte) []byte {
	c := newCompactor()
	var out []byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		body := bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(body)) == 0 {
			out = append(out, line...)
			continue
		}
		out = append(out, c.line(body)...)
	}
	return out
}

// blobDef is a blob as a transcript stores it.
type blobDef struct {
	form  string   // blobValue, blobItems, blobMembers, blobText
	parts [][]byte // the value; the runs of elements, members (between the brackets) or text (between the quotes)
	line  int      // the line of its last part (1-based)
	raw   []byte   // the value put together, references inside it expanded (nil until needed)
	busy  bool     // being put together: a blob referring to itself
}

// blobTable holds a transcript's blobs by id.
type blobTable map[string]*blobDef

// parseBlob reads a blob line: its id, time and part. ok is false for a
// line of another kind.
func parseBlob(line []byte) (id string, t float64, form string, part []byte, ok bool, err error) {
	if !bytes.Contains(line, blobKindText) {
		return "", 0, "", nil, false, nil
	}
	root, err := scanJSON(line)
	if err != nil || root.kind != '{' {
		return "", 0, "", nil, false, nil // Read's decoding reports it
	}
	kind := root.member("kind")
	if kind == nil || string(line[kind.start:kind.end]) != `"`+KindBlob+`"` {
		return "", 0, "", nil, false, nil
	}
	idNode := root.member("id")
	if idNode == nil || idNode.kind != '"' || idNode.size() <= 2 {
		return "", 0, "", nil, true, errors.New("a blob without an id")
	}
	id = string(line[idNode.start+1 : idNode.end-1])
	if tn := root.member("t"); tn != nil {
		t, _ = strconv.ParseFloat(string(line[tn.start:tn.end]), 64)
	}
	for _, f := range []struct {
		name string
		kind byte
	}{{blobItems, '['}, {blobMembers, '{'}, {blobText, '"'}, {blobValue, 0}} {
		n := root.member(f.name)
		if n == nil {
			continue
		}
		if form != "" {
			return "", 0, "", nil, true, fmt.Errorf("blob %s has both %s and %s", id, form, f.name)
		}
		form = f.name
		switch {
		case f.kind == 0:
			part = line[n.start:n.end]
		case n.kind != f.kind:
			return "", 0, "", nil, true, fmt.Errorf("blob %s: %s of the wrong type", id, f.name)
		default:
			part = line[n.start+1 : n.end-1]
		}
	}
	if form == "" {
		return "", 0, "", nil, true, fmt.Errorf("blob %s holds no %s, %s, %s or %s", id, blobValue, blobItems, blobMembers, blobText)
	}
	return id, t, form, part, true, nil
}

// add notes a part of blob id found on line n. The parts of a blob are
// on consecutive lines.
func (b blobTable) add(id, form string, part []byte, n int) error {
	d := b[id]
	if d == nil {
		b[id] = &blobDef{form: form, parts: [][]byte{part}, line: n}
		return nil
	}
	if form == blobValue || d.form == blobValue || d.line != n-1 {
		return fmt.Errorf("blob %s is stored again (first up to line %d)", id, d.line)
	}
	if form != d.form {
		return fmt.Errorf("blob %s: %s after %s", id, form, d.form)
	}
	d.parts = append(d.parts, part)
	d.line = n
	return nil
}

// resolve returns blob id's value, references inside it expanded.
func (b blobTable) resolve(id string) ([]byte, error) {
	d := b[id]
	if d == nil {
		return nil, fmt.Errorf("no blob %s in the transcript", id)
	}
	if d.raw != nil {
		return d.raw, nil
	}
	if d.busy {
		return nil, fmt.Errorf("blob %s contains itself", id)
	}
	d.busy = true
	defer func() { d.busy = false }()
	var raw []byte
	switch d.form {
	case blobValue:
		raw = d.parts[0]
	case blobItems:
		raw = append(append([]byte("["), bytes.Join(d.parts, []byte(","))...), ']')
	case blobMembers:
		raw = append(append([]byte("{"), bytes.Join(d.parts, []byte(","))...), '}')
	case blobText:
		raw = append(append([]byte(`"`), bytes.Join(d.parts, nil)...), '"')
	}
	raw, err := b.expand(raw)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", id, err)
	}
	d.raw = raw
	return raw, nil
}

// expand puts each blob a text refers to in place of its reference.
func (b blobTable) expand(text []byte) ([]byte, error) {
	if !bytes.Contains(text, refPrefix) {
		return text, nil
	}
	var out []byte
	copied := 0
	for pos := 0; ; {
		i := bytes.Index(text[pos:], refPrefix)
		if i < 0 {
			break
		}
		start := pos + i
		idStart := start + len(refPrefix)
		pos = idStart
		j := bytes.IndexByte(text[idStart:], '"')
		if j < 0 {
			break
		}
		end := idStart + j + 2 // past "}
		if end > len(text) || text[end-1] != '}' {
			continue // an object with more members: no reference
		}
		raw, err := b.resolve(string(text[idStart : idStart+j]))
		if err != nil {
			return nil, err
		}
		out = append(append(out, text[copied:start]...), raw...)
		copied, pos = end, end
	}
	if copied == 0 {
		return text, nil
	}
	return append(out, text[copied:]...), nil
}

// Expand returns a transcript with its blobs put back where they are used
// and its blob lines left out: each line as the agent wrote it, however
// long (the form of transcripts recorded before blobs). A transcript
// without blobs comes back as it is.
func Expand(data []byte) ([]byte, error) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	table, isBlob, err := collectBlobs(lines)
	if err != nil {
		return nil, err
	}
	if len(table) == 0 && !bytes.Contains(data, refPrefix) {
		return data, nil
	}
	var out []byte
	for n, line := range lines {
		if isBlob[n] {
			continue
		}
		x, err := table.expand(line)
		if err != nil {
			return nil, fmt.Errorf("transcript line %d: %w", n+1, err)
		}
		out = append(out, x...)
	}
	return out, nil
}

// collectBlobs reads the blob lines of a transcript.
func collectBlobs(lines [][]byte) (blobTable, map[int]bool, error) {
	table := blobTable{}
	isBlob := map[int]bool{}
	for n, line := range lines {
		id, _, form, part, ok, err := parseBlob(line)
		if !ok {
			continue
		}
		if err == nil {
			err = table.add(id, form, part, n+1)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("transcript line %d: %w", n+1, err)
		}
		isBlob[n] = true
	}
	return table, isBlob, nil
}
