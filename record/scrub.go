package record

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/internal/lazyregexp"
)

// Replacement is one change Scrub makes: every occurrence of Old becomes
// New.
type Replacement struct {
	Old, New string
}

// ScrubResult says what Scrub changed.
type ScrubResult struct {
	Data []byte // the scrubbed transcript
	// Lines is how many lines changed; Hashes how many distinct content
	// hashes were recomputed.
	Lines, Hashes int
	// Unknown are the hashes in the transcript whose content is not in it
	// (the file as an edit left it, when no message shows it whole): if
	// that content held an Old, the replay shows a hash difference there.
	Unknown []string
}

// protected are the tokens a replacement never changes inside: content
// hashes (recomputed instead) and the ids the replay maps by their form.
var protected = lazyregexp.New(`\b[0-9a-f]{64}\b|\b(?:sess|acp)_[0-9a-f]{8,}\b`)

var hashToken = lazyregexp.New(`^[0-9a-f]{64}$`)

// Scrub rewrites a transcript consistently with replacements: every
// string of every entry — ACP messages, codex's output and arguments, the
// app-server conversation, file and stored contents (also base64 ones),
// tool arguments and results — has each Old replaced by its New, in plain
// text and in the escaped form it takes inside a JSON text (a rollout's
// lines). The SHA-256 hashes of file contents that the tools report (and
// the agent's messages show) are recomputed for the scrubbed content, and
// diffs stay valid because Old and New must have as many lines, so the
// scrubbed transcript replays as the original did. Lines nothing changed
// in are kept byte for byte; a blob whose text changed gets a new id, in
// every line that uses it.
func Scrub(data []byte, replacements []Replacement) (*ScrubResult, error) {
	if len(replacements) == 0 {
		return nil, errors.New("nothing to replace")
	}
	var pairs []string
	for _, r := range replacements {
		if r.Old == "" {
			return nil, errors.New("an empty text cannot be replaced")
		}
		if strings.Count(r.Old, "\n") != strings.Count(r.New, "\n") {
			return nil, fmt.Errorf("%q and %q differ in their number of lines: the diffs of the files they are in would no longer fit", r.Old, r.New)
		}
		if protected.MatchString(r.Old) {
			return nil, fmt.Errorf("%q is a hash or an id the replay needs: replace the text around it", r.Old)
		}
		pairs = append(pairs, r.Old, r.New)
		if eo, en := escapedJSON(r.Old), escapedJSON(r.New); eo != r.Old {
			pairs = append(pairs, eo, en)
		}
	}
	replacer := strings.NewReplacer(pairs...)
	if _, err := Read(bytes.NewReader(data)); err != nil {
		return nil, err
	}
	// A transcript with blobs is scrubbed whole, each line as the agent
	// wrote it, then stored again as the Recorder does: a replacement in
	// a blob applies to every use, a content cut over blob lines is found
	// whole, and its hash recomputed.
	expanded, err := Expand(data)
	if err != nil {
		return nil, err
	}
	blobbed := !bytes.Equal(expanded, data)
	data = expanded

	// The hashes in the transcript whose content is in it too, with the
	// hash of that content once scrubbed.
	hashes := map[string]string{}
	for _, h := range hashInText.FindAll(data, -1) {
		hashes[string(h)] = ""
	}
	s := &scrubber{replace: replacer.Replace, hashes: hashes, lengths: map[string]int{}, reads: map[string]int{}}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			v, err := decodeJSON(line)
			if err != nil {
				return nil, err
			}
			s.collect(v, 0, "")
		}
	}
	res := &ScrubResult{}
	for h, n := range hashes {
		switch {
		case n == "":
			res.Unknown = append(res.Unknown, h)
		case n != h:
			res.Hashes++
		}
	}
	slices.Sort(res.Unknown)

	var out bytes.Buffer
	br := bufio.NewReader(bytes.NewReader(data))
	for {
		line, err := br.ReadBytes('\n')
		body := bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(body)) > 0 {
			scrubbed, changed, serr := s.line(body)
			if serr != nil {
				return nil, serr
			}
			if changed {
				res.Lines++
				out.Write(scrubbed)
				out.Write(line[len(body):])
			} else {
				out.Write(line)
			}
		} else {
			out.Write(line)
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	res.Data = out.Bytes()
	if blobbed {
		res.Data = compactText(res.Data)
	}
	if _, err := Read(bytes.NewReader(res.Data)); err != nil {
		return nil, fmt.Errorf("the scrubbed transcript does not read back: %w", err)
	}
	return res, nil
}

var hashInText = lazyregexp.New(`\b[0-9a-f]{64}\b`)

// escapedJSON is s as it appears inside a JSON string.
func escapedJSON(s string) string {
	return string(jsonText(s))
}

type scrubber struct {
	replace func(string) string
	hashes  map[string]string // hash in the transcript → the hash of its content scrubbed ("" content unknown)
	lengths map[string]int    // hash in the transcript → the length of its content scrubbed
	// reads are the lengths of read_text_file results' content scrubbed, by
	// hash and range (readKey): the content_bytes the agent shows.
	reads map[string]int
}

// collect notes the strings of a decoded entry as possible contents of the
// hashes, and the lengths of read results. A string that is JSON text (a
// stored rollout, say) is looked into too, one level deep; a file's
// base64 content is decoded.
func (s *scrubber) collect(v any, depth int, key string) {
	switch v := v.(type) {
	case string:
		s.candidate(v)
		if depth == 1 && key == "base64" {
			if b, err := base64.StdEncoding.DecodeString(v); err == nil {
				s.candidate(string(b))
			}
			return
		}
		if t := strings.TrimSpace(v); depth >= 0 && t != "" && (t[0] == '{' || t[0] == '[') {
			for _, inner := range strings.Split(t, "\n") {
				if iv, err := decodeJSON([]byte(inner)); err == nil {
					s.collect(iv, -1, "")
				}
			}
		}
	case map[string]any:
		if content, ok := v["content"].(string); ok {
			if k := readKey(v); k != "" {
				s.reads[k] = len(s.text(content))
			}
		}
		for k, child := range v {
			s.collect(child, nextDepth(depth), k)
		}
	case []any:
		for _, child := range v {
			s.collect(child, nextDepth(depth), "")
		}
	}
}

// nextDepth is the depth of a child: -1 (inside a JSON text in a string)
// stays -1.
func nextDepth(depth int) int {
	if depth < 0 {
		return depth
	}
	return depth + 1
}

// readKey names a read's result by its hash and range; "" for any other
// object.
func readKey(m map[string]any) string {
	h, ok := m["hash"].(string)
	if !ok {
		return ""
	}
	start, ok1 := m["start_line"].(json.Number)
	end, ok2 := m["end_line"].(json.Number)
	if !ok1 || !ok2 {
		return ""
	}
	return h + " " + start.String() + " " + end.String()
}

func (s *scrubber) candidate(v string) {
	h := fsops.HashOf([]byte(v))
	if known, ok := s.hashes[h]; ok && known == "" {
		scrubbed := s.text(v)
		s.hashes[h] = fsops.HashOf([]byte(scrubbed))
		s.lengths[h] = len(scrubbed)
	}
}

// sizeKeys are the byte counts of contents the tools and the agent
// report, next to the content's hash: write_text_file's bytes_written, a
// read's content_bytes (rawOutput).
var sizeKeys = [][]byte{[]byte(`"bytes_written"`), []byte(`"content_bytes"`)}

// sizes sets the byte counts in a decoded message to the scrubbed
// contents' (before the hashes are mapped); it reports whether it changed
// any.
func (s *scrubber) sizes(v any) bool {
	changed := false
	switch v := v.(type) {
	case map[string]any:
		if n, ok := v["bytes_written"].(json.Number); ok {
			if h, ok := v["hash"].(string); ok {
				if l, ok := s.lengths[h]; ok && n.String() != fmt.Sprint(l) {
					v["bytes_written"] = json.Number(fmt.Sprint(l))
					changed = true
				}
			}
		}
		if n, ok := v["content_bytes"].(json.Number); ok {
			if l, ok := s.reads[readKey(v)]; ok && n.String() != fmt.Sprint(l) {
				v["content_bytes"] = json.Number(fmt.Sprint(l))
				changed = true
			}
		}
		for _, child := range v {
			if s.sizes(child) {
				changed = true
			}
		}
	case []any:
		for _, child := range v {
			if s.sizes(child) {
				changed = true
			}
		}
	}
	return changed
}

// text scrubs one string: replacements outside the protected tokens,
// hashes mapped to their scrubbed content's.
func (s *scrubber) text(v string) string {
	var b strings.Builder
	last := 0
	for _, m := range protected.FindAllStringIndex(v, -1) {
		b.WriteString(s.replace(v[last:m[0]]))
		tok := v[m[0]:m[1]]
		if n := s.hashes[tok]; n != "" && hashToken.MatchString(tok) {
			tok = n
		}
		b.WriteString(tok)
		last = m[1]
	}
	b.WriteString(s.replace(v[last:]))
	return b.String()
}

// line scrubs one entry, keeping its keys in order (but for an entry whose
// byte counts changed, whose keys are sorted).
func (s *scrubber) line(line []byte) ([]byte, bool, error) {
	var out bytes.Buffer
	changed := false
	if containsAny(line, sizeKeys) {
		if v, err := decodeJSON(line); err == nil && s.sizes(v) {
			if b, err := encodeJSON(v); err == nil {
				line, changed = b, true
			}
		}
	}
	err := rewriteJSON(line, &out, func(key string, depth int, v string) string {
		var n string
		if depth == 1 && key == "base64" {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return v
			}
			n = base64.StdEncoding.EncodeToString([]byte(s.text(string(b))))
		} else {
			n = s.text(v)
		}
		if n != v {
			changed = true
		}
		return n
	})
	if err != nil {
		return nil, false, err
	}
	if !changed {
		return line, false, nil
	}
	return out.Bytes(), true, nil
}

// rewriteJSON re-encodes a JSON text to w, compact, keys in their order,
// every string (keys too) put through f; numbers keep their text.
func rewriteJSON(text []byte, w io.Writer, f func(key string, depth int, v string) string) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	type frame struct {
		object   bool
		count    int // values (or keys) written so far
		wantsKey bool
		key      string
	}
	var stack []frame
	bw := bufio.NewWriter(w)
	writeString := func(s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		bw.Write(bytes.TrimRight(buf.Bytes(), "\n"))
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		// Separators before a value or key.
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			isClose := tok == json.Delim('}') || tok == json.Delim(']')
			switch {
			case isClose:
			case top.object && top.wantsKey:
				if top.count > 0 {
					bw.WriteByte(',')
				}
			case top.object:
				bw.WriteByte(':')
			default:
				if top.count > 0 {
					bw.WriteByte(',')
				}
			}
		}
		key, depth := "", len(stack)
		if n := len(stack); n > 0 && stack[n-1].object && !stack[n-1].wantsKey {
			key = stack[n-1].key
		}
		switch t := tok.(type) {
		case json.Delim:
			bw.WriteString(t.String())
			switch t {
			case '{', '[':
				stack = append(stack, frame{object: t == '{', wantsKey: t == '{'})
				continue // the container's own place is settled when it closes
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantsKey {
				stack[n-1].key = t
				writeString(f("", depth, t))
				stack[n-1].wantsKey = false
				continue
			}
			writeString(f(key, depth, t))
		case json.Number:
			bw.WriteString(t.String())
		case bool:
			if t {
				bw.WriteString("true")
			} else {
				bw.WriteString("false")
			}
		case nil:
			bw.WriteString("null")
		}
		// A value is complete.
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			top.count++
			if top.object {
				top.wantsKey = true
			}
		}
	}
	return bw.Flush()
}
