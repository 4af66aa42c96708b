package record

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/codexacp/codexacp/internal/lazyregexp"
)

// Machine is what Check looks for besides patterns: the user's home, name
// and machine (empty: not looked for).
type Machine struct {
	Home, User, Host string
}

// Finding is one thing in a transcript that looks private.
type Finding struct {
	Kind  string // "home path", "user name", "host name", "key", "email", "installation id"
	Text  string // what was found
	Line  int    // the first line it is on (1-based)
	Count int    // how many times it occurs
}

func (f Finding) String() string {
	more := ""
	if f.Count > 1 {
		more = fmt.Sprintf(" (%d times)", f.Count)
	}
	return fmt.Sprintf("line %d: %s: %s%s", f.Line, f.Kind, f.Text, more)
}

// keyPatterns find strings shaped like credentials of common services,
// beyond the API keys and bearer tokens the recorder already redacts (a
// transcript edited by hand, or a format the recorder does not know).
var keyPatterns = []*lazyregexp.Regexp{
	lazyregexp.New(`\bsk-[A-Za-z0-9][A-Za-z0-9_-]{15,}`),                              // OpenAI
	lazyregexp.New(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}`),                           // a bearer token (not [REDACTED])
	lazyregexp.New(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`),                      // GitHub
	lazyregexp.New(`\bgithub_pat_[A-Za-z0-9_]{20,}`),                                  // GitHub fine-grained
	lazyregexp.New(`\bglpat-[A-Za-z0-9_-]{20,}`),                                      // GitLab
	lazyregexp.New(`\bxox[abprs]-[A-Za-z0-9-]{10,}`),                                  // Slack
	lazyregexp.New(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),                                   // AWS access key id
	lazyregexp.New(`\bAIza[0-9A-Za-z_-]{35}`),                                         // Google API key
	lazyregexp.New(`\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`), // a JWT
	lazyregexp.New(`-----BEGIN [A-Z ]*PRIVATE KEY-----`),
	// A secret-looking name given a long value: api_key = "…", TOKEN: …,
	// --password x. Values of placeholders ([REDACTED]) do not match.
	lazyregexp.New(`(?i)(?:api[_-]?key|token|secret|passw(?:or)?d|credential)[A-Za-z_]*\\?"?\s*(?:[:=]|\s)\s*\\?"?([A-Za-z0-9/+_.~-]{12,})`),
}

var (
	envVarName = lazyregexp.New(`^[A-Z][A-Z0-9_]+$`)
	email      = lazyregexp.New(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`)
	// installationID is codex's installation id where app-server names it
	// (not yet replaced by a recorder older than issue 28).
	installationID = lazyregexp.New(`"installationId":"([0-9a-fA-F-]{8,})"`)
	// homePaths are home folders of any user: Linux, macOS, Windows (as
	// JSON writes a backslash).
	homePaths = lazyregexp.New(`(?:/home/|/Users/|[A-Za-z]:\\\\Users\\\\)[A-Za-z0-9._-]+`)
)

// notPrivate are matches that say nothing about the user: the corpus's
// placeholder home, example addresses, hashes.
func notPrivate(kind, text string) bool {
	switch kind {
	case "home path":
		return text == "/home/user"
	case "email":
		at := strings.LastIndexByte(text, '@')
		domain := strings.ToLower(text[at+1:])
		return domain == "example.com" || domain == "example.org" || strings.HasSuffix(domain, ".example") ||
			strings.HasPrefix(strings.ToLower(text), "noreply@") || strings.HasSuffix(domain, "users.noreply.github.com") ||
			// Image names (logo@2x.png) and package specs (pkg@1.2.3) are no
			// addresses.
			strings.HasSuffix(domain, ".png") || strings.HasSuffix(domain, ".jpg") || strings.HasSuffix(domain, ".svg")
	case "key":
		// A variable's name (bearer_token_env_var="CODEXACP_MCP_TOKEN") or a
		// content hash is no key.
		w := lastWord(text)
		return strings.Contains(text, Redacted) || hashToken.MatchString(w) || envVarName.MatchString(w)
	}
	return false
}

func lastWord(s string) string {
	if i := strings.LastIndexAny(s, " =:\""); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Check lists what in a transcript looks private, for a user to review
// before posting it: paths under a home folder (m.Home's or any user's),
// the user's and the machine's names (whole words), strings shaped like
// keys and tokens, email addresses and codex's installation id. Each
// distinct text is listed once, with its first line and its count, in
// the order of first appearance. It reads the text only: what it finds is
// a hint, not a proof (a secret of no known shape is not found).
func Check(data []byte, m Machine) []Finding {
	var findings []Finding
	index := map[string]int{} // kind + text → position in findings
	note := func(kind, text string, line int) {
		if notPrivate(kind, text) {
			return
		}
		k := kind + "\x00" + text
		if i, ok := index[k]; ok {
			findings[i].Count++
			return
		}
		index[k] = len(findings)
		findings = append(findings, Finding{Kind: kind, Text: text, Line: line, Count: 1})
	}
	home := ""
	if m.Home != "" && m.Home != "/" && m.Home != "/root" {
		home = string(jsonText(m.Home))
	}
	for n, line := range bytes.Split(data, []byte("\n")) {
		n++
		text := string(line)
		if home != "" {
			for _, loc := range allIndex(text, home) {
				end := loc + len(home)
				if end == len(text) || !pathByte(text[end]) || text[end] == '/' || text[end] == '\\' {
					note("home path", m.Home, n)
				}
			}
		}
		for _, p := range homePaths.FindAllString(text, -1) {
			if home == "" || !strings.HasPrefix(home, p) {
				note("home path", strings.ReplaceAll(p, `\\`, `\`), n)
			}
		}
		for _, w := range []struct{ kind, word string }{{"user name", m.User}, {"host name", m.Host}} {
			if len(w.word) >= 3 && w.word != "root" && w.word != "user" {
				for range wordCount(line, jsonText(w.word)) {
					note(w.kind, w.word, n)
				}
			}
		}
		for _, p := range keyPatterns {
			for _, s := range p.FindAllString(text, -1) {
				note("key", s, n)
			}
		}
		for _, s := range email.FindAllString(text, -1) {
			note("email", s, n)
		}
		for _, s := range installationID.FindAllStringSubmatch(text, -1) {
			note("installation id", s[1], n)
		}
	}
	return findings
}

func allIndex(s, sub string) []int {
	var out []int
	for pos := 0; ; {
		i := strings.Index(s[pos:], sub)
		if i < 0 {
			return out
		}
		out = append(out, pos+i)
		pos += i + len(sub)
	}
}

// wordCount is how many times word stands as a whole word in data.
func wordCount(data, word []byte) int {
	n := 0
	for pos := 0; ; {
		i := bytes.Index(data[pos:], word)
		if i < 0 {
			return n
		}
		start, end := pos+i, pos+i+len(word)
		pos = end
		if (start == 0 || !wordByte(data[start-1])) && (end == len(data) || !wordByte(data[end])) {
			n++
		}
	}
}

// Kinds lists the kinds of findings, for a summary.
func Kinds(findings []Finding) []string {
	var kinds []string
	for _, f := range findings {
		if !slices.Contains(kinds, f.Kind) {
			kinds = append(kinds, f.Kind)
		}
	}
	return kinds
}
