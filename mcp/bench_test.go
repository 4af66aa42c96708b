package mcp

import (
	"context"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codexacp/codexacp/fsops"
	"github.com/codexacp/codexacp/fsops/fsopstest"
)

// The seeds' speed targets (003 TC8: a 1 MB write under 100 ms; 001 TC6:
// 100 edits under 500 ms) are shown here, measured end to end through an
// MCP client: go test -bench . ./mcp

func benchCall(b *testing.B, tr transport, setup func(*fsopstest.MemFiles), tool string, args func(i int) map[string]any) {
	mem := fsopstest.NewMemFiles()
	setup(mem)
	cs := tr.connect(b, NewServer(fsops.NewEngine(mem), nil))
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: tool, Arguments: args(i)})
		if err != nil || res.IsError {
			b.Fatalf("%v %v", err, res)
		}
		i++
	}
}

func BenchmarkWrite1MiB(b *testing.B) {
	content := strings.Repeat("abcdefghijklmno\n", 1<<16)
	for _, tr := range transports {
		b.Run(tr.name, func(b *testing.B) {
			benchCall(b, tr, func(m *fsopstest.MemFiles) { setDir(m, "/test") }, fsops.ToolWriteTextFile,
				func(int) map[string]any { return map[string]any{"path": "/test/large.txt", "content": content} })
		})
	}
}

func BenchmarkMultiEdit100(b *testing.B) {
	in, _, edits := hundredStrings()
	// Alternate direction so every iteration edits the file it finds.
	back := make([]any, len(edits))
	for i, e := range edits {
		m := e.(map[string]any)
		back[i] = map[string]any{"old_string": m["new_string"], "new_string": m["old_string"]}
	}
	for _, tr := range transports {
		b.Run(tr.name, func(b *testing.B) {
			benchCall(b, tr, func(m *fsopstest.MemFiles) { setFile(m, "/test/many.txt", in) }, fsops.ToolMultiEditTextFile,
				func(i int) map[string]any {
					if i%2 == 1 {
						return map[string]any{"path": "/test/many.txt", "edits": back}
					}
					return map[string]any{"path": "/test/many.txt", "edits": edits}
				})
		})
	}
}

func BenchmarkEditSmall(b *testing.B) {
	for _, tr := range transports {
		b.Run(tr.name, func(b *testing.B) {
			benchCall(b, tr, func(m *fsopstest.MemFiles) { setFile(m, "/test/config.toml", configToml) }, fsops.ToolEditTextFile,
				func(i int) map[string]any {
					if i%2 == 1 {
						return map[string]any{"path": "/test/config.toml", "old_string": "port = 3000", "new_string": "port = 8080"}
					}
					return map[string]any{"path": "/test/config.toml", "old_string": "port = 8080", "new_string": "port = 3000"}
				})
		})
	}
}

// BenchmarkNewServer is what every session/new pays for its file tools'
// server (issue 24: session/new ≤ 10 ms).
func BenchmarkNewServer(b *testing.B) {
	engine := fsops.NewEngine(fsopstest.NewMemFiles())
	b.ReportAllocs()
	for b.Loop() {
		NewServer(engine, nil)
	}
}
