package record

import (
	"errors"
	"fmt"
)

// jsonNode is one value of a JSON text, by its place in the text: the
// blobs of a transcript are cut out of, and put back into, the text of a
// line byte for byte, without decoding and re-encoding it (which would
// change its escapes and key order).
type jsonNode struct {
	start, end int    // text[start:end] is the value
	keyStart   int    // a member of an object: where its key starts; else -1
	key        string // a member of an object: its key as written (escapes left as they are)
	kind       byte   // '{', '[', '"', or 0 for a number, true, false, null
	children   []*jsonNode
}

func (n *jsonNode) size() int { return n.end - n.start }

// member is the value of n's member named key, nil when n has none.
func (n *jsonNode) member(key string) *jsonNode {
	for _, c := range n.children {
		if c.keyStart >= 0 && c.key == key {
			return c
		}
	}
	return nil
}

// maxJSONDepth bounds the nesting scanJSON follows: deeper texts are left
// as they are (no transcript line nests that deep).
const maxJSONDepth = 512

var errJSONDepth = errors.New("JSON nested too deep")

// scanJSON finds the values of one JSON text. It reports an error for
// text that is not one JSON value.
func scanJSON(text []byte) (*jsonNode, error) {
	s := &jsonScanner{text: text}
	s.space()
	n, err := s.value(0)
	if err != nil {
		return nil, err
	}
	s.space()
	if s.pos != len(text) {
		return nil, fmt.Errorf("JSON text: unexpected %q at %d", text[s.pos], s.pos)
	}
	return n, nil
}

type jsonScanner struct {
	text []byte
	pos  int
}

func (s *jsonScanner) space() {
	for s.pos < len(s.text) {
		switch s.text[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *jsonScanner) fail(what string) error {
	if s.pos >= len(s.text) {
		return fmt.Errorf("JSON text: %s at its end", what)
	}
	return fmt.Errorf("JSON text: %s at %d (%q)", what, s.pos, s.text[s.pos])
}

func (s *jsonScanner) value(depth int) (*jsonNode, error) {
	if depth > maxJSONDepth {
		return nil, errJSONDepth
	}
	if s.pos >= len(s.text) {
		return nil, s.fail("a value expected")
	}
	n := &jsonNode{start: s.pos, keyStart: -1}
	switch c := s.text[s.pos]; c {
	case '{', '[':
		n.kind = c
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		s.pos++
		s.space()
		if s.pos < len(s.text) && s.text[s.pos] == closing {
			s.pos++
			n.end = s.pos
			return n, nil
		}
		for {
			s.space()
			keyStart, key := -1, ""
			if c == '{' {
				keyStart = s.pos
				if err := s.str(); err != nil {
					return nil, err
				}
				key = string(s.text[keyStart+1 : s.pos-1])
				s.space()
				if s.pos >= len(s.text) || s.text[s.pos] != ':' {
					return nil, s.fail("':' expected")
				}
				s.pos++
				s.space()
			}
			child, err := s.value(depth + 1)
			if err != nil {
				return nil, err
			}
			child.keyStart, child.key = keyStart, key
			n.children = append(n.children, child)
			s.space()
			if s.pos >= len(s.text) {
				return nil, s.fail("',' or a closing bracket expected")
			}
			if s.text[s.pos] == ',' {
				s.pos++
				continue
			}
			if s.text[s.pos] != closing {
				return nil, s.fail("',' or a closing bracket expected")
			}
			s.pos++
			n.end = s.pos
			return n, nil
		}
	case '"':
		n.kind = '"'
		if err := s.str(); err != nil {
			return nil, err
		}
	default:
		// A number, true, false or null: up to the next delimiter.
		for s.pos < len(s.text) && !isJSONDelim(s.text[s.pos]) {
			s.pos++
		}
		if s.pos == n.start {
			return nil, s.fail("a value expected")
		}
	}
	n.end = s.pos
	return n, nil
}

func isJSONDelim(b byte) bool {
	switch b {
	case ',', '}', ']', ':', ' ', '\t', '\n', '\r', '"', '{', '[':
		return true
	}
	return false
}

// str moves past a string.
func (s *jsonScanner) str() error {
	if s.pos >= len(s.text) || s.text[s.pos] != '"' {
		return s.fail("a string expected")
	}
	for s.pos++; s.pos < len(s.text); s.pos++ {
		switch s.text[s.pos] {
		case '\\':
			s.pos++
		case '"':
			s.pos++
			return nil
		}
	}
	return s.fail("an unterminated string")
}
