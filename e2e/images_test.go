package e2e_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/e2e/mockapi"
)

// testPNG is a 1×1 PNG.
const testPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

const testPNGURL = "data:image/png;base64," + testPNG

// imagePath is the path codex names a local image by, in the text it puts
// before the image: `<image name=[Image #1] path="…">`.
var imagePath = regexp.MustCompile(`<image name=\[Image #\d+\] path="([^"]+)">`)

func (e *env) promptBlocks(blocks ...acpsdk.ContentBlock) (acpsdk.PromptResponse, error) {
	return e.editor.Conn.Prompt(e.ctx, acpsdk.PromptRequest{SessionId: e.session, Prompt: blocks})
}

func (e *env) promptBlocksAsync(blocks ...acpsdk.ContentBlock) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := e.promptBlocks(blocks...)
		done <- err
	}()
	return done
}

func (e *env) writePNG(name string) string {
	e.t.Helper()
	b, err := base64.StdEncoding.DecodeString(testPNG)
	if err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(e.cwd, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func fileImageBlock(path string) acpsdk.ContentBlock {
	uri := (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
	return acpsdk.ContentBlock{Image: &acpsdk.ContentBlockImage{Type: "image", MimeType: "image/png", Uri: &uri}}
}

// awaitHeld waits until codex's model request is held by the mock and
// returns it.
func awaitHeld(t *testing.T, e *env, hold *mockapi.Hold) mockapi.Request {
	t.Helper()
	select {
	case <-hold.Reached():
	case <-time.After(60 * time.Second):
		t.Fatal("codex never reached the model")
	}
	reqs := e.mock.Requests()
	return reqs[len(reqs)-1]
}

// An inline (base64) image in the prompt reaches the model as an
// input_image of the user's message, before the text; the agent
// advertised promptCapabilities.image. With exec the image is a private
// file codex reads, gone once the turn is over; the app-server takes it
// inline.
func TestImagePrompt(t *testing.T) { eachBackend(t, testImagePrompt) }

func testImagePrompt(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	advertised := false
	for _, raw := range e.editor.Raw() {
		if bytes.Contains(raw, []byte(`"agentCapabilities"`)) && bytes.Contains(raw, []byte(`"image":true`)) {
			advertised = true
		}
	}
	if !advertised {
		t.Error("initialize does not advertise promptCapabilities.image")
	}

	resp, hold := mockapi.Hang(mockapi.Message("a single pixel"))
	e.mock.Enqueue(resp)
	done := e.promptBlocksAsync(acpsdk.TextBlock("what is in this image?"), acpsdk.ImageBlock(testPNG, "image/png"))
	req := awaitHeld(t, e, hold)

	if got := req.Images("user"); len(got) != 1 || got[0] != testPNGURL {
		t.Errorf("model request images = %.80q, want the PNG as a data URL", got)
	}
	texts := req.Texts("user")
	if texts[len(texts)-1] != "what is in this image?" {
		t.Errorf("the prompt's text is not last in the user message: %q", texts)
	}
	paths := imagePath.FindAllStringSubmatch(strings.Join(texts, "\n"), -1)
	var private string
	switch {
	case backend == "exec" && len(paths) == 1:
		private = paths[0][1]
		if !strings.HasPrefix(filepath.Base(filepath.Dir(private)), "codexacp-images-") {
			t.Errorf("inline image file %s is not in a private codexacp-images-* directory", private)
		}
		info, err := os.Stat(private)
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("inline image file while the turn runs: %v, %v; want mode 0600", info, err)
		}
		if info, err := os.Stat(filepath.Dir(private)); err != nil || info.Mode().Perm() != 0o700 {
			t.Errorf("inline image directory while the turn runs: %v, %v; want mode 0700", info, err)
		}
	case backend == "app-server" && len(paths) == 0: // inline, no file
	default:
		t.Errorf("paths named to the model = %q", paths)
	}

	hold.Release()
	if err := <-done; err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if private != "" {
		if _, err := os.Stat(filepath.Dir(private)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("private image directory still there after the turn: %v", err)
		}
	}

	// The next turn resumes the thread: the image is in its history.
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("still one pixel")))
	e.mustPrompt("and now?")
	reqs := e.mock.Requests()
	if got := reqs[len(reqs)-1].Images("user"); len(got) != 1 || got[0] != testPNGURL {
		t.Errorf("the next turn's history holds images %.80q, want the first turn's", got)
	}
}

// An image the prompt names by a file:// URI reaches the model too, named
// by its own path on both backends (codex reads the file); the file stays.
func TestImageFilePrompt(t *testing.T) { eachBackend(t, testImageFilePrompt) }

func testImageFilePrompt(t *testing.T, backend string) {
	e := start(t, setup{backend: backend, fs: true})
	shot := e.writePNG("screen shot.png")
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("a screenshot")))
	if _, err := e.promptBlocks(acpsdk.TextBlock("what is this?"), fileImageBlock(shot)); err != nil {
		t.Fatal(err)
	}
	req := e.mock.Requests()[0]
	if got := req.Images("user"); len(got) != 1 || got[0] != testPNGURL {
		t.Errorf("model request images = %.80q, want the file's PNG as a data URL", got)
	}
	paths := imagePath.FindAllStringSubmatch(strings.Join(req.Texts("user"), "\n"), -1)
	if len(paths) != 1 || paths[0][1] != shot {
		t.Errorf("paths named to the model = %q, want %s", paths, shot)
	}
	if _, err := os.Stat(shot); err != nil {
		t.Errorf("the user's image file: %v", err)
	}
}

// However an exec turn with an inline image ends — cancelled, failed by
// the model, codex killed — its private image file is gone after it.
func TestImageFilesGoneAfterTurn(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, e *env, hold *mockapi.Hold) // ends the held turn; nil: no hold
		want string                                         // in the prompt's error; "": cancelled
	}{
		{name: "cancelled", end: func(t *testing.T, e *env, _ *mockapi.Hold) {
			if err := e.editor.Conn.Cancel(e.ctx, acpsdk.CancelNotification{SessionId: e.session}); err != nil {
				t.Fatal(err)
			}
		}},
		// end nil: the model answers 400 at once, which ends the turn with
		// codex's message explained (docs/errors.md), not an error.
		{name: "model error", want: "bad image"},
		{name: "codex killed", want: "codex exited with status 137", end: func(t *testing.T, e *env, _ *mockapi.Hold) {
			killed := false
			for _, p := range e.codexProcesses() {
				if pid, cmdline, _ := strings.Cut(p, ": "); strings.Contains(cmdline, "--image=") {
					n, _ := strconv.Atoi(pid)
					proc, err := os.FindProcess(n)
					if err != nil {
						t.Fatal(err)
					}
					killed = proc.Kill() == nil
				}
			}
			if !killed {
				t.Fatalf("no codex with an image to kill: %v", e.codexProcesses())
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, setup{backend: "exec", fs: true})
			resp, hold := mockapi.Hang(mockapi.Reasoning("looking"))
			if tc.end == nil {
				resp = mockapi.HTTPError(400, "bad image")
			}
			e.mock.Enqueue(resp)
			defer hold.Release()
			type result struct {
				resp acpsdk.PromptResponse
				err  error
			}
			done := make(chan result, 1)
			go func() {
				r, err := e.promptBlocks(acpsdk.TextBlock("describe"), acpsdk.ImageBlock(testPNG, "image/png"))
				done <- result{r, err}
			}()
			var r result
			var req mockapi.Request
			if tc.end == nil {
				r = <-done
				req = e.mock.Requests()[0]
			} else {
				req = awaitHeld(t, e, hold)
			}
			m := imagePath.FindStringSubmatch(strings.Join(req.Texts("user"), "\n"))
			if m == nil {
				t.Fatalf("no image path named to the model: %q", req.Texts("user"))
			}
			if tc.end != nil {
				if _, err := os.Stat(m[1]); err != nil {
					t.Fatalf("image file while the turn runs: %v", err)
				}
				tc.end(t, e, hold)
				select {
				case r = <-done:
				case <-time.After(30 * time.Second):
					t.Fatal("the prompt did not answer")
				}
			}
			if tc.want == "" {
				if r.err != nil || r.resp.StopReason != acpsdk.StopReasonCancelled {
					t.Errorf("prompt = %+v, %v; want cancelled", r.resp, r.err)
				}
			} else if tc.end == nil {
				if err := e.editor.Sync(e.ctx); err != nil {
					t.Fatal(err)
				}
				if text := agentTextSince(e, 0); r.err != nil || r.resp.StopReason != acpsdk.StopReasonEndTurn || !strings.Contains(text, tc.want) {
					t.Errorf("prompt = %+v, %v, agent text %q; want end_turn explaining %q", r.resp, r.err, text, tc.want)
				}
			} else if r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
				t.Errorf("prompt error = %v, want %q", r.err, tc.want)
			}
			if _, err := os.Stat(filepath.Dir(m[1])); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("private image directory still there after the turn: %v", err)
			}
		})
	}
}

// An image turn on exec runs its own codex (the images are on its command
// line); the codex waiting for the session's next prompt, started without
// them, is left for the turn after.
func TestExecImageTurnLeavesWaitingCodex(t *testing.T) {
	e := start(t, setup{backend: "exec", fs: true})
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("first")))
	e.mustPrompt("first")
	waiting, cmdline := e.waitingProcess()
	if strings.Contains(cmdline, "--image") {
		t.Fatalf("waiting codex has an image: %s", cmdline)
	}

	e.mock.Enqueue(mockapi.Reply(mockapi.Message("a pixel")))
	if _, err := e.promptBlocks(acpsdk.TextBlock("look"), acpsdk.ImageBlock(testPNG, "image/png")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.stderr.String(), `msg="waiting codex takes its prompt" pid=`+strconv.Itoa(waiting)+" ") {
		t.Fatal("the image turn took the waiting codex, started without its image")
	}
	again, _ := e.waitingProcess()
	if again != waiting {
		t.Errorf("waiting codex %d replaced by %d after the image turn", waiting, again)
	}

	e.mock.Enqueue(mockapi.Reply(mockapi.Message("third")))
	e.mustPrompt("and after?")
	if !strings.Contains(e.stderr.String(), `msg="waiting codex takes its prompt" pid=`+strconv.Itoa(waiting)) {
		t.Error("the turn after the image turn did not take the waiting codex")
	}
	reqs := e.mock.Requests()
	if got := reqs[len(reqs)-1].Images("user"); len(got) != 1 || got[0] != testPNGURL {
		t.Errorf("the turn after holds images %.80q, want the image turn's", got)
	}
}

// A bad image is refused with -32602 and its reason; nothing of the turn
// starts and the session goes on.
func TestImageRefused(t *testing.T) {
	e := start(t, setup{fs: true})
	gone := filepath.Join(e.cwd, "gone.png")
	for _, tc := range []struct {
		name  string
		block acpsdk.ContentBlock
		want  string
	}{
		{"bad base64", acpsdk.ImageBlock("not base64!", "image/png"), "not valid base64"},
		{"unsupported type", acpsdk.ImageBlock(testPNG, "image/tiff"), "accepted: image/png, image/jpeg, image/gif, image/webp"},
		{"not an image", acpsdk.ImageBlock(base64.StdEncoding.EncodeToString([]byte("hello")), "image/png"), "is not a PNG, JPEG, GIF or WebP image"},
		{"missing file", fileImageBlock(gone), gone + " does not exist"},
		{"directory", fileImageBlock(e.cwd), "is not a regular file"},
		{"web URI", acpsdk.ContentBlock{Image: &acpsdk.ContentBlockImage{Type: "image", MimeType: "image/png", Uri: acpsdk.Ptr("https://example.com/a.png")}}, "not a file:// URI"},
		{"binary resource", acpsdk.ContentBlock{Resource: &acpsdk.ContentBlockResource{Type: "resource", Resource: acpsdk.EmbeddedResourceResource{
			BlobResourceContents: &acpsdk.BlobResourceContents{Uri: "file:///x.png", Blob: testPNG, MimeType: acpsdk.Ptr("image/png")},
		}}}, "binary resources are not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.promptBlocks(acpsdk.TextBlock("look"), tc.block)
			var re *acpsdk.RequestError
			if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, tc.want) {
				t.Errorf("err = %v, want -32602 saying %q", err, tc.want)
			}
		})
	}
	if n := len(e.mock.Requests()); n != 0 {
		t.Errorf("model requests = %d after refused prompts, want none", n)
	}
	e.mock.Enqueue(mockapi.Reply(mockapi.Message("fine")))
	e.mustPrompt("plain text still works")
}
