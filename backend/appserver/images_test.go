package appserver

import (
	"encoding/json"
	"testing"

	"github.com/codexacp/codexacp/backend"
	"github.com/codexacp/codexacp/internal/testkit"
)

func TestAppServerInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn backend.Turn
		want string // the input as turn/start sends it
	}{
		{"text", backend.Turn{Prompt: "hi"}, `[{"text":"hi","type":"text"}]`},
		{"images first", backend.Turn{Prompt: "what is this?", Images: []backend.Image{
			{MimeType: "image/png", Data: testkit.PNG(t)},
			{MimeType: "image/png", Path: "/home/u/shot.png"},
		}}, `[{"type":"image","url":"data:image/png;base64,` + testkit.PNGBase64 + `"},` +
			`{"path":"/home/u/shot.png","type":"localImage"},` +
			`{"text":"what is this?","type":"text"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(appServerInput(tc.turn))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("input = %s\nwant %s", got, tc.want)
			}
		})
	}
}
