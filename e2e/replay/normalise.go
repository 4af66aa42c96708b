package replay

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/codexacp/codexacp/fsops"
)

// rootPlaceholder stands for the replay's workspace root in compared messages.
const rootPlaceholder = "$ROOT"

// Random ids are ids the agent draws at random: session ids and the ids of
// file tool calls, `\b(sess_|acp_)[0-9a-f]{8,}\b` (replaceRandomIDs). Each
// becomes <prefix><n>, numbered by first appearance in its stream, so that
// the same structure compares equal.
var randomIDPrefixes = []string{"sess_", "acp_"}

// replaceRandomIDs returns raw with each random id replaced by with(id,
// prefix). It is the regular expression above, scanned by hand: a
// replay's harness normalises every message twice.
func replaceRandomIDs(raw []byte, with func(id []byte, prefix string) []byte) []byte {
	var out []byte
	done := 0 // raw[:done] is in out
	for i := 0; i < len(raw); i++ {
		if i > 0 && isWordByte(raw[i-1]) {
			continue
		}
		for _, prefix := range randomIDPrefixes {
			if !bytes.HasPrefix(raw[i:], []byte(prefix)) {
				continue
			}
			end := i + len(prefix)
			for end < len(raw) && (raw[end] >= '0' && raw[end] <= '9' || raw[end] >= 'a' && raw[end] <= 'f') {
				end++
			}
			if end-i-len(prefix) < 8 || end < len(raw) && isWordByte(raw[end]) {
				break
			}
			out = append(append(out, raw[done:i]...), with(raw[i:end], prefix)...)
			done, i = end, end-1
			break
		}
	}
	if out == nil {
		return raw
	}
	return append(out, raw[done:]...)
}

// isWordByte reports whether b is a word character as \b sees it.
func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// timeKeys are fields holding wall-clock times.
var timeKeys = map[string]bool{"updatedAt": true, "createdAt": true, "timestamp": true}

// normaliseAll normalises one stream of agent messages. Two orders the
// agent does not decide are fixed first. The SDK answers each request on
// its own goroutine, so answers due at the same moment (a steered prompt's
// and the prompt's whose turn it joined) come in either order, which
// JSON-RPC leaves open: answers that come one after another are put in the
// order of the editor's requests. And the SDK sends a $/cancel_request (the
// agent gave up a request of its own, a permission question on a cancel)
// from a goroutine of its own, so it may come before or after what the
// agent sends next: each goes to the end of its stretch of messages, just
// before the next answer. A session's commands announcement
// (available_commands_update) goes out once its skills are listed, which
// nothing else waits for: it may come before, among or after a turn's
// updates, or another session's. The announcements are compared apart
// from the ordered stream: they go after it, each session's in the order
// they came, the sessions in the order of their first appearance.
func normaliseAll(raws [][]byte, root string) []string {
	type classified struct {
		raw []byte
		msgClass
	}
	var msgs []classified
	var announcements [][]byte
	for _, raw := range raws {
		c := classify(raw)
		if c.announcement {
			announcements = append(announcements, raw)
			continue
		}
		msgs = append(msgs, classified{raw, c})
	}
	for i := 0; i < len(msgs); {
		j := i
		for j < len(msgs) && msgs[j].answerID == "" {
			j++
		}
		// msgs[i:j] has no answer: its cancel requests go last.
		slices.SortStableFunc(msgs[i:j], func(a, b classified) int { return cmp.Compare(a.cancelOrder(), b.cancelOrder()) })
		i = j + 1
	}
	for i := 0; i < len(msgs); i++ {
		j := i
		for j < len(msgs) && msgs[j].answerID != "" {
			j++
		}
		slices.SortStableFunc(msgs[i:j], func(a, b classified) int { return compareIDs(a.answerID, b.answerID) })
		i = j
	}
	n := &normaliser{root: jsonText(root), ids: map[string]string{}, next: map[string]int{}, requests: map[string]string{}}
	out := make([]string, 0, len(msgs)+len(announcements))
	for _, m := range msgs {
		out = append(out, n.message(m.raw))
	}
	// Numbered after the stream: a session's id first appears in the
	// answer that opened it.
	tail := make([]string, len(announcements))
	for i, m := range announcements {
		tail[i] = n.message(m)
	}
	slices.SortStableFunc(tail, func(a, b string) int {
		return cmp.Compare(sessionOrder(a), sessionOrder(b))
	})
	return append(out, tail...)
}

// msgClass is what the harness tells apart in an agent message.
type msgClass struct {
	// answerID is the id of a JSON-RPC answer (result or error, no
	// method) as JSON text; "" for any other message.
	answerID     string
	cancel       bool // the SDK's $/cancel_request notification
	announcement bool // a session/update carrying available_commands_update
}

// classify reads what the harness tells apart in raw, decoding it once
// (the zero msgClass when it is not JSON).
func classify(raw []byte) msgClass {
	var m message
	if json.Unmarshal(raw, &m) != nil {
		return msgClass{}
	}
	return m.class()
}

// class is classify of the decoded message m.
func (m *message) class() msgClass {
	var c msgClass
	switch {
	case m.Method == "" && len(m.ID) > 0 && string(m.ID) != "null":
		c.answerID = string(m.ID)
	case m.Method == "$/cancel_request":
		c.cancel = true
	case m.Method == "session/update":
		var p struct {
			Update struct {
				SessionUpdate string `json:"sessionUpdate"`
			} `json:"update"`
		}
		c.announcement = json.Unmarshal(m.Params, &p) == nil && p.Update.SessionUpdate == "available_commands_update"
	}
	return c
}

// cancelOrder is 1 for a cancel request, else 0.
func (c msgClass) cancelOrder() int {
	if c.cancel {
		return 1
	}
	return 0
}

// keepsPlace reports whether a message keeps its place in the stream as
// normaliseAll orders it: neither an answer, a cancel request nor a
// commands announcement.
func (c msgClass) keepsPlace() bool { return c.answerID == "" && !c.cancel && !c.announcement }

// isCommandsAnnouncement reports whether raw is a session/update
// notification carrying available_commands_update.
func isCommandsAnnouncement(raw []byte) bool { return classify(raw).announcement }

// normalisedSession is the session placeholder a normalised message names.
var normalisedSession = regexp.MustCompile(`"sessionId": "sess_(\d+)"`)

// sessionOrder is the number of the session a normalised message names
// (its placeholder's), 0 when it names none.
func sessionOrder(msg string) int {
	m := normalisedSession.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(m[1])
	return v
}

// compareIDs orders request ids (JSON text): numbers by value, before
// strings.
func compareIDs(a, b string) int {
	x, errX := strconv.ParseFloat(a, 64)
	y, errY := strconv.ParseFloat(b, 64)
	switch {
	case errX == nil && errY == nil:
		return cmp.Compare(x, y)
	case errX == nil:
		return -1
	case errY == nil:
		return 1
	}
	return strings.Compare(a, b)
}

type normaliser struct {
	root     []byte
	ids      map[string]string // random id → placeholder
	next     map[string]int    // last number given, by prefix
	requests map[string]string // the agent's JSON-RPC request id → placeholder
}

// message returns raw with run-specific values replaced, as indented JSON
// with sorted keys (or as it is when it is not JSON).
func (n *normaliser) message(raw []byte) string {
	if len(n.root) > 0 {
		raw = bytes.ReplaceAll(raw, n.root, []byte(rootPlaceholder))
	}
	raw = replaceRandomIDs(raw, func(id []byte, prefix string) []byte {
		if p, ok := n.ids[string(id)]; ok {
			return []byte(p)
		}
		n.next[prefix]++
		p := fmt.Sprintf("%s%d", prefix, n.next[prefix])
		n.ids[string(id)] = p
		return []byte(p)
	})
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	if m, ok := v.(map[string]any); ok {
		n.rpc(m)
	}
	clearTimes(v)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// rpc replaces the ids of the agent's own requests (a counter in the SDK)
// and the agent version in the initialize result.
func (n *normaliser) rpc(m map[string]any) {
	if method, ok := m["method"].(string); ok {
		if id, ok := m["id"]; ok {
			m["id"] = n.request(id)
		}
		if params, ok := m["params"].(map[string]any); ok && method == "$/cancel_request" {
			if id, ok := params["requestId"]; ok {
				params["requestId"] = n.request(id)
			}
		}
	}
	if result, ok := m["result"].(map[string]any); ok {
		if info, ok := result["agentInfo"].(map[string]any); ok {
			if _, ok := info["version"]; ok {
				info["version"] = "<version>"
			}
		}
	}
}

func (n *normaliser) request(id any) string {
	key := fmt.Sprint(id)
	if p, ok := n.requests[key]; ok {
		return p
	}
	p := fmt.Sprintf("<agent request %d>", len(n.requests)+1)
	n.requests[key] = p
	return p
}

func clearTimes(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if _, ok := child.(string); ok && timeKeys[k] {
				v[k] = "<time>"
				continue
			}
			clearTimes(child)
		}
	case []any:
		for _, child := range v {
			clearTimes(child)
		}
	}
}

// Diff returns a unified diff of two normalised message streams ("" when
// they are equal): "-" lines are the recording's, "+" lines the replay's.
func Diff(want, got []string) string {
	w, g := joinMessages(want), joinMessages(got)
	if w == g {
		return ""
	}
	d := fsops.UnifiedDiff("messages", []byte(w), []byte(g))
	// Replace fsops's "--- path" / "+++ path" headers.
	if _, rest, ok := strings.Cut(d, "\n"); ok {
		if _, rest, ok = strings.Cut(rest, "\n"); ok {
			d = rest
		}
	}
	return fmt.Sprintf("agent messages differ (%d recorded, %d replayed):\n--- recorded\n+++ replayed\n%s", len(want), len(got), d)
}

func joinMessages(msgs []string) string {
	if len(msgs) == 0 {
		return ""
	}
	return strings.Join(msgs, "\n") + "\n"
}

// normaliseOne is msg normalised on its own, as normaliseAll normalises a
// stream of it alone.
func normaliseOne(msg []byte, root string) string {
	n := &normaliser{root: jsonText(root), ids: map[string]string{}, next: map[string]int{}, requests: map[string]string{}}
	return n.message(msg)
}
