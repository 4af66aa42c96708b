//go:build unix

package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codexacp/codexacp/mcp"
)

// Whether a file's content is recorded is judged where its path leads, not
// on its text: a link in the workspace to a file outside it, or a path
// through a linked directory, records only that the file exists (issue
// 28: a transcript is posted; the call may be refused, its path is still
// recorded). A link inside to a file inside is the workspace's own, and so
// is a workspace reached through a link.
func TestFileContentsJudgedWhereTheLinkLeads(t *testing.T) {
	base := t.TempDir()
	work, outside := filepath.Join(base, "work"), filepath.Join(base, "outside")
	for _, d := range []string{work, outside, filepath.Join(work, "sub")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	const secret = "aws_secret_access_key = AKIAsecret"
	writeFile(t, filepath.Join(outside, "credentials"), secret+"\n")
	writeFile(t, filepath.Join(work, "sub", "a.txt"), "inside\n")
	symlink(t, filepath.Join(outside, "credentials"), filepath.Join(work, "creds"))
	symlink(t, outside, filepath.Join(work, "aws"))
	symlink(t, filepath.Join(work, "sub", "a.txt"), filepath.Join(work, "alias.txt"))
	symlink(t, work, filepath.Join(base, "worklink"))

	tests := []struct {
		name, root, path string
		content          string // "" when it must not be recorded
	}{
		{"link to a file outside", work, filepath.Join(work, "creds"), ""},
		{"through a linked directory", work, filepath.Join(work, "aws", "credentials"), ""},
		{"link inside to inside", work, filepath.Join(work, "alias.txt"), "inside\n"},
		{"a workspace reached through a link", filepath.Join(base, "worklink"), filepath.Join(base, "worklink", "sub", "a.txt"), "inside\n"},
		{"a missing file through a linked directory", work, filepath.Join(work, "aws", "new.txt"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			r := New(&buf)
			r.Start("codexacp test", 0)
			obs := r.ToolObserver("s", []string{tt.root}, nil)
			c := &mcp.Call{ID: "1", Tool: "read_text_file", Path: tt.path, Arguments: json.RawMessage(`{}`)}
			obs.CallStarted(context.Background(), c)
			obs.CallFinished(context.Background(), c, struct{}{}, nil)
			if strings.Contains(buf.String(), "AKIAsecret") {
				t.Fatalf("a file outside the workspace was copied into the transcript: %s", buf.String())
			}
			entries := readAll(t, buf.Bytes())
			var f *Entry
			for i := range entries {
				if entries[i].Kind == KindFile {
					f = &entries[i]
				}
			}
			if f == nil {
				t.Fatalf("no file entry: %s", kinds(entries))
			}
			if f.Path != tt.path {
				t.Errorf("file entry's path = %q, want the path as the call named it (%q)", f.Path, tt.path)
			}
			got := ""
			if f.Content != nil {
				got = *f.Content
			}
			if got != tt.content || f.Base64 != "" {
				t.Errorf("recorded content = %q (base64 %q), want %q", got, f.Base64, tt.content)
			}
			if wantExists := !strings.HasSuffix(tt.path, "new.txt"); f.Exists != wantExists {
				t.Errorf("exists = %v, want %v (%s)", f.Exists, wantExists, fmt.Sprint(*f))
			}
		})
	}
}
