package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// codec makes the Go values a method's params and result decode into.
type codec struct {
	params, result func() any
}

func request[P, R any](m Request[P, R]) (string, codec) {
	return string(m), codec{func() any { return new(P) }, func() any { return new(R) }}
}

func notification[P any](n Notification[P]) (string, codec) {
	return string(n), codec{params: func() any { return new(P) }}
}

func serverRequest[P, R any](r ServerRequest[P, R]) (string, codec) {
	return string(r), codec{func() any { return new(P) }, func() any { return new(R) }}
}

// methods are the typed methods, by name.
var methods = map[string]codec{}

func add(name string, c codec) { methods[name] = c }

func init() {
	for _, f := range []func() (string, codec){
		func() (string, codec) { return request(Initialize) },
		func() (string, codec) { return request(ThreadStart) },
		func() (string, codec) { return request(ThreadResume) },
		func() (string, codec) { return request(ThreadFork) },
		func() (string, codec) { return request(ThreadDelete) },
		func() (string, codec) { return request(ThreadNameSet) },
		func() (string, codec) { return request(ThreadCompactStart) },
		func() (string, codec) { return request(ThreadGoalGet) },
		func() (string, codec) { return request(ThreadGoalSet) },
		func() (string, codec) { return request(ThreadGoalClear) },
		func() (string, codec) { return request(ThreadTurnsList) },
		func() (string, codec) { return request(ThreadRevert) },
		func() (string, codec) { return request(TurnStart) },
		func() (string, codec) { return request(TurnSteer) },
		func() (string, codec) { return request(TurnInterrupt) },
		func() (string, codec) { return request(ReviewStart) },
		func() (string, codec) { return request(ThreadTurnsList) },
		func() (string, codec) { return request(ThreadRevert) },
		func() (string, codec) { return request(McpServerStatusList) },
		func() (string, codec) { return request(SkillsList) },
		func() (string, codec) { return request(ConfigRead) },
		func() (string, codec) { return request(ModelList) },
		func() (string, codec) { return request(AccountLoginStart) },
		func() (string, codec) { return request(AccountRead) },
		func() (string, codec) { return request(AccountRateLimitsRead) },
		func() (string, codec) { return request(McpServerOauthLogin) },
		func() (string, codec) { return request(McpServerReload) },
		func() (string, codec) { return request(HooksList) },
		func() (string, codec) { return request(ConfigBatchWrite) },
		func() (string, codec) { return notification(McpServerOauthLoginCompleted) },
		func() (string, codec) { return notification(McpServerStartupStatus) },
		func() (string, codec) { return notification(ThreadStarted) },
		func() (string, codec) { return notification(TurnStarted) },
		func() (string, codec) { return notification(TurnCompleted) },
		func() (string, codec) { return notification(ItemStarted) },
		func() (string, codec) { return notification(ItemCompleted) },
		func() (string, codec) { return notification(AgentMessageDelta) },
		func() (string, codec) { return notification(PlanDelta) },
		func() (string, codec) { return notification(ReasoningTextDelta) },
		func() (string, codec) { return notification(ReasoningSumDelta) },
		func() (string, codec) { return notification(CommandOutputDelta) },
		func() (string, codec) { return notification(ReasoningPartAdded) },
		func() (string, codec) { return notification(TurnPlanUpdated) },
		func() (string, codec) { return notification(ThreadTokenUsage) },
		func() (string, codec) { return notification(ErrorNotice) },
		func() (string, codec) { return notification(Warning) },
		func() (string, codec) { return notification(ModelRerouted) },
		func() (string, codec) { return notification(ThreadGoalUpdated) },
		func() (string, codec) { return notification(ThreadGoalCleared) },
		func() (string, codec) { return notification(ServerRequestSolved) },
		func() (string, codec) { return notification(SkillsChanged) },
		func() (string, codec) { return notification(AccountRateLimitsUpdated) },
		func() (string, codec) { return serverRequest(CommandExecutionRequestApproval) },
		func() (string, codec) { return serverRequest(FileChangeRequestApproval) },
		func() (string, codec) { return serverRequest(PermissionsRequestApproval) },
		func() (string, codec) { return serverRequest(McpServerElicitationRequest) },
		func() (string, codec) { return serverRequest(ToolRequestUserInput) },
	} {
		add(f())
	}
}

// recorded is one app-server message of a transcript or fixture.
type recorded struct {
	where string // file:line
	out   bool   // sent by the client
	exact bool   // sent by codexacp: must re-encode to the same JSON
	run   string // the app-server process, for ids
	msg   struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
	}
}

// readRecorded reads the app-server messages of the replay corpus (what
// codexacp sent and got, e2e/testdata/transcripts) and of the fixtures
// recorded from codex 0.169 by a probe (events/testdata/appserver).
func readRecorded(t *testing.T) []recorded {
	t.Helper()
	var all []recorded
	// Every transcript: an exec session's /undo runs an app-server too.
	transcripts, _ := filepath.Glob(filepath.Join("..", "..", "..", "e2e", "testdata", "transcripts", "*.ndjson"))
	fixtures, _ := filepath.Glob(filepath.Join("..", "..", "..", "events", "testdata", "appserver", "*.ndjson"))
	if len(transcripts) == 0 || len(fixtures) == 0 {
		t.Fatalf("no recorded messages: %d transcripts, %d fixtures", len(transcripts), len(fixtures))
	}
	for _, file := range slices.Concat(transcripts, fixtures) {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		blobs := blobTable{}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for line := 1; sc.Scan(); line++ {
			if blobs.add(sc.Bytes()) {
				continue
			}
			var e struct {
				Kind string          `json:"kind"`
				Dir  string          `json:"dir"`
				Run  json.RawMessage `json:"run"`
				Msg  json.RawMessage `json:"msg"`
			}
			if json.Unmarshal(sc.Bytes(), &e) != nil || len(e.Msg) == 0 || e.Msg[0] != '{' {
				continue
			}
			if e.Kind != "appserver" && e.Kind != "" {
				continue
			}
			if bytes.Contains(e.Msg, []byte(`{"$blob":"`)) {
				msg, err := blobs.expand(e.Msg)
				if err != nil {
					t.Fatalf("%s:%d: %v", filepath.Base(file), line, err)
				}
				e.Msg = msg
			}
			r := recorded{where: fmt.Sprintf("%s:%d", filepath.Base(file), line), run: string(e.Run)}
			switch e.Dir {
			case "out":
				r.out, r.exact = true, true
			case "c2s":
				r.out = true
			case "in", "s2c":
			default:
				continue
			}
			if err := json.Unmarshal(e.Msg, &r.msg); err != nil {
				t.Fatalf("%s: %v", r.where, err)
			}
			all = append(all, r)
		}
		f.Close()
	}
	return all
}

// TestRoundTrip decodes every recorded message of a typed method into its
// Go type and encodes it again: a request or answer codexacp sent gives
// the same JSON (so codexacp can send the types without changing the
// wire); a message codex sent keeps every field the type names, with its
// value, and gains none. Every request codexacp sent has a type.
func TestRoundTrip(t *testing.T) {
	msgs := readRecorded(t)
	pending := map[string]string{} // run and id of a request → its method
	seen := map[string]int{}
	for _, r := range msgs {
		m := r.msg
		key := r.where[:strings.IndexByte(r.where, ':')] + "/" + r.run + "/" + string(m.ID)
		hasID := len(m.ID) > 0 && string(m.ID) != "null"
		var method string
		var v any
		var raw json.RawMessage
		switch {
		case m.Method != "":
			method, raw = m.Method, m.Params
			if hasID {
				dir := "in"
				if r.out {
					dir = "out"
				}
				pending[dir+key] = m.Method
			}
			c, ok := methods[m.Method]
			if !ok {
				if r.exact && m.Method != string(Initialized) {
					t.Errorf("%s: codexacp sent %s, which has no type", r.where, m.Method)
				}
				continue
			}
			v = c.params()
		case hasID && len(m.Result) > 0:
			// An answer: to a request of the other side.
			dir := "out"
			if r.out {
				dir = "in"
			}
			method = pending[dir+key]
			c, ok := methods[method]
			if !ok || c.result == nil {
				continue
			}
			v, raw = c.result(), m.Result
			method += " (result)"
		default:
			continue
		}
		seen[method]++
		if len(raw) == 0 {
			raw = json.RawMessage("{}")
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Errorf("%s: %s: %v", r.where, method, err)
			continue
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Errorf("%s: %s: encode: %v", r.where, method, err)
			continue
		}
		var orig, back any
		json.Unmarshal(raw, &orig)
		json.Unmarshal(again, &back)
		declare(reflect.TypeOf(v).Elem())
		if r.exact {
			if got, want := canonical(t, again), canonical(t, raw); got != want {
				t.Errorf("%s: %s re-encodes differently:\n got %s\nwant %s", r.where, method, got, want)
			} else if compact := compactJSON(raw); !bytes.Equal(again, compact) {
				t.Errorf("%s: %s re-encodes in another order:\n got %s\nwant %s", r.where, method, again, compact)
			}
			lost(orig, back, reflect.TypeOf(v).Elem(), "") // notes the fields seen
			continue
		}
		if p := notWithin(back, orig, ""); p != "" {
			t.Errorf("%s: %s: re-encoded %s is not in the message", r.where, method, p)
		}
		if p := lost(orig, back, reflect.TypeOf(v).Elem(), ""); p != "" {
			t.Errorf("%s: %s: %s (a field of %T) lost: %s", r.where, method, p, v, clip(raw))
		}
	}
	// The corpus has messages of these: a table entry that no longer
	// matches any would be noticed.
	for _, name := range []string{"thread/start", "thread/start (result)", "thread/resume", "thread/fork", "turn/start", "turn/start (result)",
		"turn/steer", "turn/interrupt", "review/start", "thread/compact/start", "thread/name/set", "thread/goal/get", "thread/goal/set",
		"thread/goal/clear", "mcpServerStatus/list", "skills/list", "skills/list (result)", "turn/started", "turn/completed",
		"item/started", "item/completed", "item/commandExecution/requestApproval", "item/commandExecution/requestApproval (result)",
		"mcpServer/elicitation/request", "mcpServer/elicitation/request (result)", "item/tool/requestUserInput",
		"item/tool/requestUserInput (result)", "thread/delete", "initialize", "initialize (result)",
		"thread/turns/list", "thread/turns/list (result)", "thread/revert", "thread/revert (result)"} {
		if seen[name] == 0 {
			t.Errorf("no recorded %s", name)
		}
	}
	t.Logf("messages checked by method: %v", seen)

	// Every field the types name was in some recorded message (so its
	// JSON name is codex's), but those no transcript has yet.
	var never []string
	for f := range declared {
		if !seenFields[f] && !notRecorded[f] {
			never = append(never, f)
		}
	}
	slices.Sort(never)
	if len(never) > 0 {
		t.Errorf("fields in no recorded message (a misspelt JSON name?): %v", never)
	}
	for f := range notRecorded {
		if seenFields[f] {
			t.Errorf("%s is recorded now: take it off notRecorded", f)
		}
	}
}

// notRecorded are the fields of the types that no recorded message holds:
// their names are checked against codex's schema only (docs/codex-app-server.md).
var notRecorded = map[string]bool{
	"ClientInfo.title": true,
	// The mock API's responses carry no usage windows or credits.
	"CreditsSnapshot.balance":                         true,
	"CreditsSnapshot.hasCredits":                      true,
	"CreditsSnapshot.unlimited":                       true,
	"RateLimitWindow.resetsAt":                        true,
	"RateLimitWindow.usedPercent":                     true,
	"RateLimitWindow.windowDurationMins":              true,
	"McpServerElicitationRequestParams.elicitationId": true, // url mode
	"McpServerElicitationRequestParams.url":           true,
	"McpServerElicitationRequestResponse.content":     true, // an accepted form's answer
	"ReviewTarget.instructions":                       true,
	"ThreadTurnsListParams.cursor":                    true, // a thread of more than 50 turns
	"SandboxPolicy.excludeSlashTmp":                   true,
	"SandboxPolicy.excludeTmpdirEnvVar":               true,
	"SandboxPolicy.networkAccess":                     true,
	"SkillsListParams.forceReload":                    true,
	"ThreadStartParams.model":                         true, // codexacp names the model per turn
	"ThreadResumeParams.model":                        true,
	"ThreadForkParams.model":                          true,
	"ThreadStartParams.serviceTier":                   true,
	"ThreadResumeParams.serviceTier":                  true,
	"ThreadForkParams.serviceTier":                    true,
	"ThreadGoalClearParams.origin":                    true,
	"ThreadGoalSetParams.tokenBudget":                 true,
}

// declared and seenFields are the fields of the methods' types (Type.json
// name), and those found in recorded messages.
var declared, seenFields = map[string]bool{}, map[string]bool{}

// declare notes the fields of t and of the types it holds.
func declare(t reflect.Type) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == rawMessage {
		return
	}
	if strings.HasPrefix(t.Name(), "Nullable[") || t == reflect.TypeFor[AskForApproval]() {
		return // no fields of its own on the wire
	}
	for name, ft := range jsonFields(t) {
		key := t.Name() + "." + name
		if declared[key] {
			continue
		}
		declared[key] = true
		declare(ft)
	}
}

func canonical(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// notWithin is the path of a value in x that is not in y ("" when x is
// within y: every key of an object with a value within y's, lists
// element by element, scalars equal).
func notWithin(x, y any, path string) string {
	switch x := x.(type) {
	case map[string]any:
		ym, ok := y.(map[string]any)
		if !ok {
			return path
		}
		for k, v := range x {
			yv, ok := ym[k]
			if !ok {
				return path + "." + k
			}
			if p := notWithin(v, yv, path+"."+k); p != "" {
				return p
			}
		}
		return ""
	case []any:
		ys, ok := y.([]any)
		if !ok || len(ys) != len(x) {
			return path
		}
		for i := range x {
			if p := notWithin(x[i], ys[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
		return ""
	}
	if !reflect.DeepEqual(x, y) {
		return path
	}
	return ""
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// lost is the path of a value of orig that typ names (a field, by its JSON
// name) and that the re-encoded back lacks or changed; "" when none.
// Values left out by omitempty (null, false, 0, "", empty) do not count.
func lost(orig, back any, typ reflect.Type, path string) string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if empty(orig) {
		return ""
	}
	if typ == rawMessage || implementsJSON(typ) {
		if om, ok := orig.(map[string]any); ok && typ.Kind() == reflect.Struct {
			for name := range jsonFields(typ) {
				if _, ok := om[name]; ok {
					seenFields[typ.Name()+"."+name] = true
				}
			}
		}
		// Kept whole: it must come back as it was.
		if !reflect.DeepEqual(orig, back) {
			return path
		}
		return ""
	}
	switch typ.Kind() {
	case reflect.Struct:
		om, ok := orig.(map[string]any)
		if !ok {
			return ""
		}
		bm, _ := back.(map[string]any)
		for name, ft := range jsonFields(typ) {
			ov, ok := om[name]
			if !ok {
				continue
			}
			seenFields[typ.Name()+"."+name] = true
			bv, ok := bm[name]
			if !ok && !empty(ov) {
				return path + "." + name
			}
			if p := lost(ov, bv, ft, path+"."+name); p != "" {
				return p
			}
		}
	case reflect.Slice:
		os, _ := orig.([]any)
		bs, _ := back.([]any)
		if len(os) != len(bs) {
			return path
		}
		for i := range os {
			if p := lost(os[i], bs[i], typ.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		om, _ := orig.(map[string]any)
		bm, _ := back.(map[string]any)
		for k, ov := range om {
			if p := lost(ov, bm[k], typ.Elem(), path+"."+k); p != "" {
				return p
			}
		}
	case reflect.Interface:
		if !reflect.DeepEqual(orig, back) {
			return path
		}
	default:
		if !reflect.DeepEqual(orig, back) {
			return path
		}
	}
	return ""
}

func implementsJSON(t reflect.Type) bool {
	return t.Implements(reflect.TypeFor[json.Marshaler]()) || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]())
}

// jsonFields are the struct's fields by JSON name, embedded structs' too.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case float64:
		return v == 0
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// The zero Nullable is left out; Null is sent as null; Some as the value.
func TestNullable(t *testing.T) {
	type p struct {
		Tier Nullable[string] `json:"serviceTier,omitzero"`
	}
	for _, tt := range []struct {
		v    p
		want string
	}{{p{}, `{}`}, {p{Null[string]()}, `{"serviceTier":null}`}, {p{Some("priority")}, `{"serviceTier":"priority"}`}} {
		b, err := json.Marshal(tt.v)
		if err != nil || string(b) != tt.want {
			t.Errorf("%+v → %s, %v; want %s", tt.v, b, err, tt.want)
		}
		var back p
		if err := json.Unmarshal(b, &back); err != nil || back != tt.v {
			t.Errorf("%s → %+v, %v; want %+v", b, back, err, tt.v)
		}
	}
}

// A text input sends its text even when empty; other inputs their fields;
// in the order of their names.
func TestUserInputFields(t *testing.T) {
	for _, tt := range []struct {
		in   UserInput
		want string
	}{
		{UserInput{Type: InputText}, `{"text":"","type":"text"}`},
		{UserInput{Type: InputLocalImage, Path: "/w/a.png"}, `{"path":"/w/a.png","type":"localImage"}`},
		{UserInput{Type: InputImage, URL: "data:image/png;base64,AA=="}, `{"type":"image","url":"data:image/png;base64,AA=="}`},
		{UserInput{Type: InputSkill, Name: "greet", Path: "/w/SKILL.md"}, `{"name":"greet","path":"/w/SKILL.md","type":"skill"}`},
	} {
		b, err := json.Marshal(tt.in)
		if err != nil || !bytes.Equal(b, []byte(tt.want)) {
			t.Errorf("%+v → %s, %v; want %s", tt.in, b, err, tt.want)
		}
	}
}

// compactJSON is raw without insignificant space.
func compactJSON(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// blobTable holds the blobs of a transcript of format 2: a large value is
// stored once, before its first use, in one or more lines ({"kind":"blob",
// "id", and its "value", or runs of its "items", "members" or "text"}) and
// referred to as {"$blob":id}. record.Read puts them back, but record
// imports this package; the test reads them itself.
type blobTable map[string]*struct {
	form  string
	parts []string
}

// add keeps line when it is a blob's, and says so.
func (b blobTable) add(line []byte) bool {
	if !bytes.Contains(line, []byte(`"kind":"blob"`)) {
		return false
	}
	var e map[string]json.RawMessage
	var id string
	if json.Unmarshal(line, &e) != nil || json.Unmarshal(e["id"], &id) != nil || string(e["kind"]) != `"blob"` {
		return false
	}
	for _, form := range []string{"value", "items", "members", "text"} {
		raw, ok := e[form]
		if !ok {
			continue
		}
		d := b[id]
		if d == nil {
			d = &struct {
				form  string
				parts []string
			}{form: form}
			b[id] = d
		}
		part := string(raw)
		if form != "value" {
			part = part[1 : len(part)-1] // inside the brackets or quotes
		}
		d.parts = append(d.parts, part)
	}
	return true
}

// expand replaces every {"$blob":id} in msg by the blob's value.
func (b blobTable) expand(msg []byte) ([]byte, error) {
	re := regexp.MustCompile(`\{"\$blob":"([0-9a-f]+)"\}`)
	var err error
	for depth := 0; re.Match(msg) && depth < 8; depth++ { // a blob may refer to others
		msg = re.ReplaceAllFunc(msg, func(ref []byte) []byte {
			id := string(re.FindSubmatch(ref)[1])
			d := b[id]
			if d == nil {
				err = fmt.Errorf("no blob %s before its use", id)
				return ref
			}
			switch d.form {
			case "items":
				return []byte("[" + strings.Join(d.parts, ",") + "]")
			case "members":
				return []byte("{" + strings.Join(d.parts, ",") + "}")
			case "text":
				return []byte(`"` + strings.Join(d.parts, "") + `"`)
			}
			return []byte(d.parts[0])
		})
	}
	return msg, err
}
