package appserver

import (
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/testkit"
)

func TestAppServerInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn backend.Turn
		want []any
	}{
		{"text", backend.Turn{Prompt: "hi"}, []any{map[string]any{"type": "text", "text": "hi"}}},
		{"images first", backend.Turn{Prompt: "what is this?", Images: []backend.Image{
			{MimeType: "image/png", Data: testkit.PNG(t)},
			{MimeType: "image/png", Path: "/home/u/shot.png"},
		}}, []any{
			map[string]any{"type": "image", "url": "data:image/png;base64," + testkit.PNGBase64},
			map[string]any{"type": "localImage", "path": "/home/u/shot.png"},
			map[string]any{"type": "text", "text": "what is this?"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := appServerInput(tc.turn)
			if len(got) != len(tc.want) {
				t.Fatalf("input = %v, want %v", got, tc.want)
			}
			for i := range got {
				g, w := got[i].(map[string]any), tc.want[i].(map[string]any)
				if len(g) != len(w) {
					t.Errorf("item %d = %v, want %v", i, g, w)
				}
				for k := range w {
					if g[k] != w[k] {
						t.Errorf("item %d = %v, want %v", i, g, w)
					}
				}
			}
		})
	}
}
