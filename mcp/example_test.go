package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
	"github.com/codexacp/codexacp/mcp"
)

// A server over an in-memory file system, connected to a go-sdk client by
// the in-memory transport: an edit, then an edit that fails. Both results
// carry structuredContent, which is all Codex shows the model.
func ExampleNewServer() {
	files := fsopstest.NewMemFiles()
	files.Set("/w/config.toml", "[server]\nport = 8080\n")
	server := mcp.NewServer(fsops.NewEngine(files), nil) // nil: no observer, every write allowed

	ctx := context.Background()
	st, ct := mcpsdk.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "example"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	for _, old := range []string{"port = 8080", "port = 9999"} {
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: fsops.ToolEditTextFile,
			Arguments: map[string]any{"path": "/w/config.toml", "old_string": old, "new_string": "port = 3000"}})
		if err != nil {
			fmt.Println(err)
			return
		}
		var sc struct {
			Success   bool            `json:"success"`
			LineRange fsops.LineRange `json:"line_range"`
			Error     *mcp.ErrorBody  `json:"error"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &sc)
		if res.IsError {
			fmt.Println("error", sc.Error.Code, sc.Error.Message)
		} else {
			fmt.Println("success", sc.Success, "line", sc.LineRange.Start)
		}
	}
	content, _ := files.Get("/w/config.toml")
	fmt.Print(content)
	// Output:
	// success true line 2
	// error -32010 String not found in file: port = 9999
	// [server]
	// port = 3000
}

// bearer adds a session's token to every request, as codex does with
// bearer_token_env_var.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// One host per process serves every session's server over streamable HTTP
// on 127.0.0.1; the bearer token a session's server was registered with
// selects it.
func ExampleHost() {
	host, err := mcp.NewHost(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer host.Close()

	files := fsopstest.NewMemFiles()
	files.Set("/w/notes.txt", "one\ntwo\n")
	token, unregister := host.Register(mcp.NewServer(fsops.NewEngine(files), nil))
	defer unregister()

	ctx := context.Background()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "example"}, nil).Connect(ctx, &mcpsdk.StreamableClientTransport{
		Endpoint: host.URL(), HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: fsops.ToolReadTextFile,
		Arguments: map[string]any{"path": "/w/notes.txt", "line": -1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(res.StructuredContent)
	var read fsops.ReadResult
	json.Unmarshal(b, &read)
	fmt.Printf("line %d of %d: %q\n", read.StartLine, read.TotalLines, read.Content)
	// Output:
	// line 2 of 2: "two\n"
}
