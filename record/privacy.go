package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"

	"github.com/codexacp/codexacp/internal/lazyregexp"
	"github.com/codexacp/codexacp/internal/regularfile"
)

// What a user would not post, written as placeholders (see SetMachine).
const (
	HomePlaceholder = "$HOME" // the user's home directory
	// HostPlaceholder stands for the machine's name; InstallationPlaceholder
	// for codex's installation id ($CODEX_HOME/installation_id, the same in
	// every session of the user: app-server's remoteControl/status/changed
	// names it).
	HostPlaceholder         = "[HOST]"
	InstallationPlaceholder = "[INSTALLATION_ID]"
)

// installationIDFile is where codex keeps its installation id, in its home.
const installationIDFile = "installation_id"

// maxInstallationIDBytes bounds what is read of installationIDFile: the id
// is a UUID (36 bytes), and anything larger is not codex's.
const maxInstallationIDBytes = 1 << 10

// SetMachine names the user's home directory and the machine's host name,
// which a transcript then does not show: every path under home is written
// as HomePlaceholder/… (after the state directory and codex's home, which
// may lie inside it), and the host name becomes HostPlaceholder where
// codex names its server (serverName) and, when it is long enough not to
// be an ordinary word (8 characters or more), wherever it stands as a whole
// word. A home that is the root or /root (which names no one, and is
// codex's path of its agent tree) is not replaced. Call it before Start.
func (r *Recorder) SetMachine(home, host string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.home = ""
	if home != "" {
		if abs, err := filepath.Abs(home); err == nil && abs != filepath.Dir(abs) && abs != "/root" {
			r.home = abs
		}
	}
	r.host = ""
	if len(host) >= minSecretLen {
		r.host = host
	}
	r.sortDirsLocked()
}

// sortDirsLocked rebuilds the placeholder list: the state directory, codex's
// home and the user's home, a directory inside another replaced first.
func (r *Recorder) sortDirsLocked() {
	dirs := append([]dirPlaceholder(nil), r.storeDirs...)
	if r.home != "" {
		dirs = append(dirs, dirPlaceholder{from: r.home, to: HomePlaceholder})
	}
	sort.SliceStable(dirs, func(i, j int) bool { return len(dirs[i].from) > len(dirs[j].from) })
	r.dirs = dirs
}

// readInstallationID returns codex's installation id from its home, or ""
// when there is none to read. Any local process of the user can put
// something else there: the file is opened without waiting (a FIFO would
// hold --record's start-up, before the editor's initialize is read) and
// read within a small bound (a link to /dev/zero would grow memory without
// end). A final link is followed: codex's home is the user's own, and a
// regular file only names a value to hide. Call it without r.mu held.
func readInstallationID(codexHome string) string {
	path := filepath.Join(codexHome, installationIDFile)
	b, err := regularfile.ReadFile(path, maxInstallationIDBytes, regularfile.FollowLink)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			// Not a reason to stop recording: the id only goes unhidden if codex sends it.
			slog.Warn("record: codex's installation id not read", "err", err)
		}
		return ""
	}
	return strings.TrimSpace(string(b))
}

// addInstallationID makes id a value replaced by InstallationPlaceholder
// wherever it appears; r.mu is held.
func (r *Recorder) addInstallationID(id string) {
	if len(id) < minSecretLen || id == InstallationPlaceholder {
		return
	}
	for _, known := range r.installationIDs {
		if string(known) == id {
			return
		}
	}
	r.installationIDs = append(r.installationIDs, []byte(id))
}

// hideMachine replaces, in an encoded entry, codex's installation ids and
// the host name (whole words); r.mu is held.
func (r *Recorder) hideMachine(line []byte) []byte {
	for _, id := range r.installationIDs {
		if bytes.Contains(line, id) {
			line = bytes.ReplaceAll(line, id, []byte(InstallationPlaceholder))
		}
	}
	if r.host != "" {
		line = replaceWord(line, jsonText(r.host), []byte(HostPlaceholder))
	}
	return line
}

// replaceWord replaces the occurrences of word in data that are not part
// of a longer word or name.
func replaceWord(data, word, with []byte) []byte {
	if len(word) == 0 || !bytes.Contains(data, word) {
		return data
	}
	var out []byte
	copied := 0
	for pos := 0; ; {
		i := bytes.Index(data[pos:], word)
		if i < 0 {
			break
		}
		start, end := pos+i, pos+i+len(word)
		pos = end
		if start > 0 && wordByte(data[start-1]) || end < len(data) && wordByte(data[end]) {
			continue
		}
		out = append(append(out, data[copied:start]...), with...)
		copied = end
	}
	if copied == 0 {
		return data
	}
	return append(out, data[copied:]...)
}

func wordByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '-' || b >= 0x80
}

// installationKey names codex's installation id in its messages; serverName
// next to it is the machine's name.
var installationKey = []byte(`"installationId"`)

// hideServerIdentity blanks, in a message from codex, the installation id
// and the machine's name next to it (remoteControl/status/changed), and
// returns the ids it found, so that they are replaced wherever else they
// appear. Other messages come back unchanged.
func hideServerIdentity(msg json.RawMessage) (json.RawMessage, []string) {
	if !bytes.Contains(msg, installationKey) {
		return msg, nil
	}
	v, err := decodeJSON(msg)
	if err != nil {
		return msg, nil
	}
	var ids []string
	hide := func(obj map[string]any) bool {
		id, ok := obj["installationId"].(string)
		if !ok || id == "" || id == InstallationPlaceholder {
			return false
		}
		ids = append(ids, id)
		obj["installationId"] = InstallationPlaceholder
		if name, ok := obj["serverName"].(string); ok && name != "" {
			obj["serverName"] = HostPlaceholder
		}
		return true
	}
	if !editObjects(v, hide) {
		return msg, nil
	}
	out, err := encodeJSON(v)
	if err != nil {
		return msg, nil
	}
	return out, ids
}

// ownEnvName reports whether an environment variable is codex's own
// (CODEX*, OPENAI*), whose name a transcript keeps; the names of the
// user's other variables say what they use and are left out.
func ownEnvName(name string) bool {
	return strings.HasPrefix(name, "CODEX") || strings.HasPrefix(name, "OPENAI")
}

// The editor's MCP servers as they travel: mcpServers in ACP (session/new,
// load, resume, fork), mcp_servers.<name> in codex's config (app-server's
// thread config, exec's -c arguments).
var (
	mcpServersKey   = []byte(`"mcpServers"`)
	mcpServersTable = []byte(`mcp_servers`)
)

// isSecretFlag reports whether a command-line argument (--api-key, -token,
// PASSWORD) is followed by, or set to with =, a secret.
func isSecretFlag(arg string) bool {
	name := strings.TrimLeft(arg, "-")
	return name != "" && !strings.ContainsAny(name, " /\\") && secretNameOf(name)
}

// secretNameOf is secrets.IsName for argument names.
func secretNameOf(name string) bool { return secretArgName.MatchString(name) }

var secretArgName = lazyregexp.New(`(?i)(key|token|secret|passw|auth|cookie|credential)`)

// redactArgs blanks, in an MCP server's arguments, the values of
// secret-looking flags: the argument after --api-key, --token, --password
// …, and the value of --api-key=… or API_KEY=…. learn is told each value.
func redactArgs(args []string, learn func(string)) bool {
	changed := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if name, value, ok := strings.Cut(a, "="); ok {
			if value != "" && value != Redacted && isSecretFlag(name) {
				learn(value)
				args[i] = name + "=" + Redacted
				changed = true
			}
			continue
		}
		if strings.HasPrefix(a, "-") && isSecretFlag(a) && i+1 < len(args) {
			if next := args[i+1]; next != "" && next != Redacted && !strings.HasPrefix(next, "--") {
				learn(next)
				args[i+1] = Redacted
				changed = true
				i++
			}
		}
	}
	return changed
}

// redactServer blanks an MCP server's secret arguments (redactArgs) and
// every value of its environment (a list of {name, value} in ACP, a table
// in codex's config): a database URL or a token may sit under any name.
// Values under secret-looking names, and flag values, are learned
// (replaced wherever else they appear); others are only blanked here, so
// that an ordinary word does not vanish from the whole transcript.
func redactServer(server map[string]any, learn func(string)) bool {
	changed := false
	if list, ok := server["args"].([]any); ok {
		strs := make([]string, len(list))
		for i, a := range list {
			strs[i], _ = a.(string)
		}
		if redactArgs(strs, learn) {
			for i, s := range strs {
				if _, ok := list[i].(string); ok {
					list[i] = s
				}
			}
			changed = true
		}
	}
	blank := func(name, value string) bool {
		if value == "" || value == Redacted {
			return false
		}
		if secretNameOf(name) {
			learn(value)
		}
		return true
	}
	switch env := server["env"].(type) {
	case []any:
		for _, pair := range env {
			p, _ := pair.(map[string]any)
			name, _ := p["name"].(string)
			if s, ok := p["value"].(string); ok && blank(name, s) {
				p["value"] = Redacted
				changed = true
			}
		}
	case map[string]any:
		for name, value := range env {
			if s, ok := value.(string); ok && blank(name, s) {
				env[name] = Redacted
				changed = true
			}
		}
	}
	return changed
}

// redactMCPServers finds the MCP servers in a decoded message (ACP's
// mcpServers lists, codex's mcp_servers.<name> config keys or mcp_servers
// table) and redacts each (redactServer).
func redactMCPServers(v any, learn func(string)) bool {
	changed := false
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			switch {
			case k == "mcpServers":
				if list, ok := child.([]any); ok {
					for _, s := range list {
						if m, ok := s.(map[string]any); ok && redactServer(m, learn) {
							changed = true
						}
					}
				}
				continue
			case strings.HasPrefix(k, "mcp_servers."):
				if m, ok := child.(map[string]any); ok && redactServer(m, learn) {
					changed = true
				}
				continue
			case k == "mcp_servers":
				if m, ok := child.(map[string]any); ok {
					for _, s := range m {
						if sm, ok := s.(map[string]any); ok && redactServer(sm, learn) {
							changed = true
						}
					}
				}
				continue
			}
			if redactMCPServers(child, learn) {
				changed = true
			}
		}
	case []any:
		for _, child := range v {
			if redactMCPServers(child, learn) {
				changed = true
			}
		}
	}
	return changed
}

// tomlString matches a TOML basic or literal string.
var tomlString = lazyregexp.New(`^(?:"(?:[^"\\]|\\.)*"|'[^']*')`)

// tomlStrings returns the spans ([start, end) in s) and values of the
// strings of a TOML array or inline table that starts at s[open] ('[' or
// '{'), up to its closing bracket; for a table, only the values (strings
// after '='). Nested arrays and tables are skipped whole.
func tomlStrings(s string, open int) (spans [][2]int, values []string) {
	closer := byte(']')
	if s[open] == '{' {
		closer = '}'
	}
	depth := 0
	afterEquals := s[open] == '['
	for i := open + 1; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			m := tomlString.FindString(s[i:])
			if m == "" {
				return spans, values
			}
			if depth == 0 && afterEquals {
				spans = append(spans, [2]int{i, i + len(m)})
				values = append(values, tomlUnquote(m))
			}
			i += len(m)
			continue
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			if depth == 0 {
				if c != closer {
					return spans, values
				}
				return spans, values
			}
			depth--
		case c == '=' && closer == '}' && depth == 0:
			afterEquals = true
		case c == ',' && closer == '}' && depth == 0:
			afterEquals = false
		}
		i++
	}
	return spans, values
}

// tomlUnquote is the value of a TOML string token (escapes as in JSON,
// which TOML's basic strings share for what matters here).
func tomlUnquote(tok string) string {
	if tok[0] == '\'' {
		return tok[1 : len(tok)-1]
	}
	var s string
	if json.Unmarshal([]byte(tok), &s) != nil {
		return tok[1 : len(tok)-1]
	}
	return s
}

var (
	tomlArgsKey = lazyregexp.New(`(?:^|[{,\s])args\s*=\s*\[`)
	tomlEnvKey  = lazyregexp.New(`(?:^|[{,\s])env\s*=\s*\{`)
)

// redactMCPConfigArg redacts the editor's (or the user's) MCP servers in a
// codex -c argument as redactServer does in JSON: in
// mcp_servers.<name>={…, args=[…], env={…}}, and in the dotted forms
// mcp_servers.<name>.args=[…], mcp_servers.<name>.env={…} and
// mcp_servers.<name>.env.<VAR>=…. learn is told each secret value.
func redactMCPConfigArg(arg string, learn func(string)) string {
	key, value, ok := strings.Cut(arg, "=")
	key = strings.TrimSpace(key)
	if !ok || !strings.HasPrefix(key, "mcp_servers") {
		return arg
	}
	parts := strings.Split(key, ".")
	last := parts[len(parts)-1]
	v := strings.TrimLeft(value, " \t")
	prefix := key + "=" + value[:len(value)-len(v)]
	switch {
	case len(parts) >= 2 && parts[len(parts)-2] == "env" && v != "" && v != `"`+Redacted+`"`:
		if secretNameOf(last) {
			learn(tomlUnquote(v))
		}
		return key + `="` + Redacted + `"`
	case last == "args" && strings.HasPrefix(v, "["):
		return prefix + redactTOMLArgs(v, 0, learn)
	case last == "env" && strings.HasPrefix(v, "{"):
		return prefix + redactTOMLEnv(v, 0, learn)
	}
	out := v
	if m := tomlArgsKey.FindStringIndex(out); m != nil {
		out = redactTOMLArgs(out, m[1]-1, learn)
	}
	if m := tomlEnvKey.FindStringIndex(out); m != nil {
		out = redactTOMLEnv(out, m[1]-1, learn)
	}
	return prefix + out
}

// redactTOMLArgs applies redactArgs to the TOML array at s[open].
func redactTOMLArgs(s string, open int, learn func(string)) string {
	spans, values := tomlStrings(s, open)
	redacted := append([]string(nil), values...)
	if !redactArgs(redacted, learn) {
		return s
	}
	var b strings.Builder
	copied := 0
	for i, sp := range spans {
		if redacted[i] == values[i] {
			continue
		}
		b.WriteString(s[copied:sp[0]])
		q, _ := json.Marshal(redacted[i])
		b.Write(q)
		copied = sp[1]
	}
	b.WriteString(s[copied:])
	return b.String()
}

// redactTOMLEnv blanks every value of the TOML inline table at s[open],
// learning those under secret-looking names.
func redactTOMLEnv(s string, open int, learn func(string)) string {
	spans, values := tomlStrings(s, open)
	var b strings.Builder
	copied := 0
	for i, sp := range spans {
		if values[i] == "" || values[i] == Redacted {
			continue
		}
		// The name is the key before this value's '='.
		name := s[copied:sp[0]]
		if eq := strings.LastIndexByte(name, '='); eq >= 0 {
			name = name[:eq]
		}
		if j := strings.LastIndexAny(name, "{,"); j >= 0 {
			name = name[j+1:]
		}
		if secretNameOf(strings.Trim(strings.TrimSpace(name), `"'`)) {
			learn(values[i])
		}
		b.WriteString(s[copied:sp[0]])
		b.WriteString(`"` + Redacted + `"`)
		copied = sp[1]
	}
	b.WriteString(s[copied:])
	return b.String()
}
