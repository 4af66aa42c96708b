package record_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/codexacp/codexacp/record"
)

// A Recorder sits between the editor and the agent: the agent reads the
// editor's messages through Input and writes its own through Output, and
// every message lands in the transcript with its secrets blanked: the
// values of secret-looking variables, secret-looking fields (and each value
// blanked there, wherever else it appears) and API-key and bearer-token
// patterns. Read gives the entries back.
func ExampleRecorder() {
	var transcript bytes.Buffer
	rec := record.New(&transcript)
	// Values of secret-looking variables are replaced wherever they appear.
	rec.AddSecretsFromEnv([]string{"OPENAI_API_KEY=sk-proj-0123456789abcdef", "PATH=/usr/bin"})
	rec.Start("codexacp 1.0.0", 272000)

	editor := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"gh","command":"gh-mcp","args":[],"env":[{"name":"GITHUB_TOKEN","value":"ghp_secret_value"}]}]}}` + "\n")
	if _, err := io.Copy(io.Discard, rec.Input(editor)); err != nil {
		fmt.Println(err)
	}
	agent := rec.Output(io.Discard)
	fmt.Fprintln(agent, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess_1"}}`)
	fmt.Fprintln(agent, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"key sk-proj-0123456789abcdef, token ghp_secret_value"}}}}`)
	if err := rec.Close(); err != nil {
		fmt.Println(err)
	}

	entries, err := record.Read(&transcript)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range entries {
		switch e.Kind {
		case record.KindStart:
			fmt.Println(e.Kind, e.Agent, e.ContextWindow)
		case record.KindACP:
			if e.EOF {
				fmt.Println(e.Kind, e.Dir, "eof")
			} else {
				fmt.Println(e.Kind, e.Dir, string(e.Msg))
			}
		default:
			fmt.Println(e.Kind)
		}
	}
	// Output:
	// start codexacp 1.0.0 272000
	// acp in {"id":1,"jsonrpc":"2.0","method":"session/new","params":{"cwd":"/w","mcpServers":[{"args":[],"command":"gh-mcp","env":[{"name":"GITHUB_TOKEN","value":"[REDACTED]"}],"name":"gh"}]}}
	// acp in eof
	// acp out {"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess_1"}}
	// acp out {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"key [REDACTED], token [REDACTED]"}}}}
}

// RebasePaths moves a transcript to another directory, as the replay does
// with the recorded workspace: whole paths only, also inside JSON strings.
func ExampleRebasePaths() {
	data := []byte(`{"cwd":"/replay/002","path":"/replay/002/a.txt","other":"/replay/0023/b","text":"see /replay/002."}`)
	fmt.Println(string(record.RebasePaths(data, "/replay", "/tmp/r1")))
	// Output:
	// {"cwd":"/tmp/r1/002","path":"/tmp/r1/002/a.txt","other":"/tmp/r1/0023/b","text":"see /tmp/r1/002."}
}
