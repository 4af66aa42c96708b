package acp

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/codex"
	"github.com/codexacp/codexacp/events"
	"github.com/codexacp/codexacp/internal/fakeeditor"
)

// pngBase64 is a 1×1 PNG.
const pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

func pngBytes(t testing.TB) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(pngBase64)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Magic bytes enough for http.DetectContentType.
var (
	jpegBytes = []byte("\xFF\xD8\xFF\xE0\x00\x10JFIF\x00")
	gifBytes  = []byte("GIF89a\x01\x00\x01\x00")
	webpBytes = []byte("RIFF\x10\x00\x00\x00WEBPVP8 ")
)

func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

func TestPromptImage(t *testing.T) {
	dir := t.TempDir()
	png := pngBytes(t)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shot := write("screen shot.png", png)
	notImage := write("notes.png", []byte("just some text, not an image"))
	huge := filepath.Join(dir, "huge.png")
	if err := os.WriteFile(huge, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, maxImageBytes+1); err != nil { // sparse: cheap
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	tooBig := strings.Repeat("A", base64.StdEncoding.EncodedLen(maxImageBytes+4))

	for _, tc := range []struct {
		name     string
		data     string
		mimeType string
		uri      string
		wantType string
		wantPath string
		wantErr  string
	}{
		{name: "png", data: pngBase64, mimeType: "image/png", wantType: "image/png"},
		{name: "unpadded", data: strings.TrimRight(pngBase64, "="), mimeType: "image/png", wantType: "image/png"},
		{name: "line breaks", data: pngBase64[:20] + "\n" + pngBase64[20:], mimeType: "image/png", wantType: "image/png"},
		{name: "jpg alias", data: b64(jpegBytes), mimeType: "image/jpg", wantType: "image/jpeg"},
		{name: "mime parameters", data: b64(gifBytes), mimeType: "image/gif; charset=binary", wantType: "image/gif"},
		{name: "webp", data: b64(webpBytes), mimeType: "image/webp", wantType: "image/webp"},
		{name: "bytes win over the declared type", data: b64(jpegBytes), mimeType: "image/png", wantType: "image/jpeg"},
		{name: "data wins over uri", data: pngBase64, mimeType: "image/png", uri: "file:///nonexistent.png", wantType: "image/png"},
		{name: "unsupported type", data: pngBase64, mimeType: "image/bmp", wantErr: `unsupported image type "image/bmp" (accepted: image/png, image/jpeg, image/gif, image/webp)`},
		{name: "no type", data: pngBase64, wantErr: "unsupported image type"},
		{name: "bad base64", data: "not base64!", mimeType: "image/png", wantErr: "the image data is not valid base64"},
		{name: "not an image", data: b64([]byte("hello, world")), mimeType: "image/png", wantErr: "is not a PNG, JPEG, GIF or WebP image (its bytes look like text/plain"},
		{name: "too large", data: tooBig, mimeType: "image/png", wantErr: "larger than 20 MiB"},
		{name: "nothing", mimeType: "image/png", wantErr: "neither data nor a file:// URI"},
		{name: "file", uri: fileURI(shot), mimeType: "image/png", wantType: "image/png", wantPath: shot},
		{name: "file of any declared type", uri: fileURI(shot), wantType: "image/png", wantPath: shot},
		{name: "localhost file", uri: "file://localhost" + filepath.ToSlash(shot), wantType: "image/png", wantPath: shot},
		{name: "missing file", uri: fileURI(filepath.Join(dir, "gone.png")), wantErr: "gone.png does not exist"},
		{name: "directory", uri: fileURI(dir), wantErr: "is not a regular file"},
		{name: "huge file", uri: fileURI(huge), wantErr: "huge.png is larger than 20 MiB"},
		{name: "file not an image", uri: fileURI(notImage), wantErr: "notes.png is not a PNG, JPEG, GIF or WebP image"},
		{name: "web URI", uri: "https://example.com/a.png", wantErr: "is not a file:// URI; send other images as base64 data"},
		{name: "other host", uri: "file://server/share/a.png", wantErr: "names another host (server)"},
		{name: "relative", uri: "file:a.png", wantErr: "has no absolute path"},
		{name: "bad URI", uri: "file://%zz", wantErr: "is not a valid URI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			block := &acpsdk.ContentBlockImage{Type: "image", Data: tc.data, MimeType: tc.mimeType}
			if tc.uri != "" {
				block.Uri = &tc.uri
			}
			img, err := promptImage(block)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if img.MimeType != tc.wantType || img.Path != tc.wantPath {
				t.Errorf("image = %s at %q, want %s at %q", img.MimeType, img.Path, tc.wantType, tc.wantPath)
			}
			if tc.wantPath == "" && len(img.Data) == 0 {
				t.Error("inline image without data")
			}
			if tc.wantPath != "" && img.Data != nil {
				t.Error("file image carries data")
			}
		})
	}
}

func TestPromptImageDevice(t *testing.T) {
	if _, err := os.Stat(os.DevNull); err != nil || filepath.Separator != '/' {
		t.Skip("no /dev/null")
	}
	uri := "file://" + os.DevNull
	_, err := promptImage(&acpsdk.ContentBlockImage{Type: "image", MimeType: "image/png", Uri: &uri})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("err = %v", err)
	}
}

func TestImageDataURL(t *testing.T) {
	img := Image{MimeType: "image/png", Data: pngBytes(t)}
	if got, want := img.DataURL(), "data:image/png;base64,"+pngBase64; got != want {
		t.Errorf("DataURL = %q, want %q", got, want)
	}
}

func TestWriteImageFiles(t *testing.T) {
	user := t.TempDir()
	plain := filepath.Join(user, "shot.png")
	comma := filepath.Join(user, "a,b.png")
	for _, p := range []string{plain, comma} {
		if err := os.WriteFile(p, pngBytes(t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inline := Image{MimeType: "image/jpeg", Data: jpegBytes}
	for _, tc := range []struct {
		name      string
		imgs      []Image
		wantDir   bool // something was written
		wantPaths func(dir string) []string
	}{
		{
			name:      "user files as they are",
			imgs:      []Image{{MimeType: "image/png", Path: plain}},
			wantPaths: func(string) []string { return []string{plain} },
		},
		{
			name:    "inline written, numbered by position",
			imgs:    []Image{{MimeType: "image/png", Path: plain}, inline, {MimeType: "image/png", Data: pngBytes(t)}},
			wantDir: true,
			wantPaths: func(dir string) []string {
				return []string{plain, filepath.Join(dir, "image-2.jpg"), filepath.Join(dir, "image-3.png")}
			},
		},
		{
			name:      "a path with a comma is copied",
			imgs:      []Image{{MimeType: "image/png", Path: comma}},
			wantDir:   true,
			wantPaths: func(dir string) []string { return []string{filepath.Join(dir, "image-1.png")} },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			files, err := writeImageFiles(context.Background(), root, tc.imgs)
			if err != nil {
				t.Fatal(err)
			}
			if (files.dir != "") != tc.wantDir {
				t.Fatalf("dir = %q, want one: %v", files.dir, tc.wantDir)
			}
			if got, want := files.Paths, tc.wantPaths(files.dir); !slices.Equal(got, want) {
				t.Errorf("paths = %q, want %q", got, want)
			}
			if files.dir != "" {
				if filepath.Dir(files.dir) != root {
					t.Errorf("dir %s not under %s", files.dir, root)
				}
				if info, err := os.Stat(files.dir); err != nil || info.Mode().Perm() != 0o700 {
					t.Errorf("dir mode = %v, %v; want 0700", info.Mode(), err)
				}
			}
			for i, p := range files.Paths {
				got, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				want := tc.imgs[i].Data
				if want == nil {
					want = pngBytes(t)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s holds %d bytes, want the image's %d", p, len(got), len(want))
				}
				if strings.HasPrefix(p, files.dir+string(filepath.Separator)) && files.dir != "" {
					if info, _ := os.Stat(p); info.Mode().Perm() != 0o600 {
						t.Errorf("%s mode = %v, want 0600", p, info.Mode())
					}
				}
			}
			if err := files.Remove(); err != nil {
				t.Fatal(err)
			}
			if left, _ := os.ReadDir(root); len(left) != 0 {
				t.Errorf("left behind after Remove: %v", left)
			}
			for _, p := range []string{plain, comma} {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("the user's file is gone: %v", err)
				}
			}
		})
	}
}

func TestWriteImageFilesFailureLeavesNothing(t *testing.T) {
	root := t.TempDir()
	missing := filepath.Join(root, "gone.png") // vanished since it was checked
	_, err := writeImageFiles(context.Background(), root, []Image{{MimeType: "image/png", Data: pngBytes(t)}, {MimeType: "image/png", Path: missing + ",x"}})
	if err == nil || !strings.Contains(err.Error(), "writing the prompt's images") {
		t.Fatalf("err = %v", err)
	}
	if left, _ := os.ReadDir(root); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if _, err := writeImageFiles(context.Background(), filepath.Join(root, "no", "such"), []Image{{MimeType: "image/png", Data: pngBytes(t)}}); err == nil {
		t.Error("no error writing under a missing directory")
	}
}

// imageRunner is a LineRunner and Prestarter that checks the turn's image
// files while "codex" runs, then ends the way end says.
type imageRunner struct {
	t   *testing.T
	end func(ctx context.Context) error

	mu        sync.Mutex
	seen      [][]byte // contents of each image file, read while running
	runs      []codex.Invocation
	prestarts []codex.Invocation
	discards  []codex.Invocation
}

func (r *imageRunner) Run(ctx context.Context, inv codex.Invocation, onLine func([]byte)) error {
	r.mu.Lock()
	r.runs = append(r.runs, inv)
	for _, p := range inv.Images {
		b, err := os.ReadFile(p)
		if err != nil {
			r.t.Errorf("image file unreadable while codex runs: %v", err)
		}
		r.seen = append(r.seen, b)
	}
	r.mu.Unlock()
	return r.end(ctx)
}

func (r *imageRunner) Prestart(inv codex.Invocation, idle time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prestarts = append(r.prestarts, inv)
	return nil
}

func (r *imageRunner) Discard(inv codex.Invocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.discards = append(r.discards, inv)
}

func (r *imageRunner) Close() {}

type discardOutput struct{}

func (discardOutput) Event(events.Event) {}
func (discardOutput) ApproveCommand(context.Context, CommandApproval) ApprovalDecision {
	return ApprovalCancel
}

// The exec backend's image files exist while codex runs and are gone after
// the turn however it ends.
func TestExecImageFilesLifetime(t *testing.T) {
	errCrash := &codex.ExitError{Code: 139, Signal: 11}
	for _, tc := range []struct {
		name   string
		end    func(ctx context.Context) error
		cancel bool
		want   error
	}{
		{name: "completed", end: func(context.Context) error { return nil }},
		{name: "codex failed", end: func(context.Context) error { return errCrash }, want: errCrash},
		{name: "cancelled", cancel: true, end: func(ctx context.Context) error {
			<-ctx.Done()
			return context.Cause(ctx)
		}, want: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			r := &imageRunner{t: t, end: tc.end}
			b := &ExecBackend{Runner: r, Logger: discardLogger(), ImageDir: root}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				// While codex runs: a turn cancelled before writes no
				// image at all (TestWriteImageFilesStopsAtCancel).
				end := tc.end
				r.end = func(ctx context.Context) error {
					cancel()
					return end(ctx)
				}
			}
			turn := Turn{SessionID: "s1", Cwd: t.TempDir(), Prompt: "what is this?",
				Images: []Image{{MimeType: "image/png", Data: pngBytes(t)}, {MimeType: "image/jpeg", Data: jpegBytes}}}
			err := b.Run(ctx, turn, discardOutput{})
			if !errors.Is(err, tc.want) {
				t.Errorf("Run = %v, want %v", err, tc.want)
			}
			if len(r.seen) != 2 || !bytes.Equal(r.seen[0], pngBytes(t)) || !bytes.Equal(r.seen[1], jpegBytes) {
				t.Errorf("codex saw %d image files with other contents", len(r.seen))
			}
			if left, _ := os.ReadDir(root); len(left) != 0 {
				t.Errorf("left behind after the turn: %v", left)
			}
		})
	}
}

// A turn with images runs a codex of its own; the one waiting for the
// session's next turn, started without them, stays for the turn after.
func TestExecImageTurnKeepsWaitingCodex(t *testing.T) {
	r := &imageRunner{t: t, end: func(context.Context) error { return nil }}
	b := &ExecBackend{Runner: r, Logger: discardLogger(), ImageDir: t.TempDir()}
	turn := Turn{SessionID: "s1", Cwd: t.TempDir(), ThreadID: "t1", Mode: ModeAsk}
	b.Prepare(turn)
	waitPrestarts(t, b)
	if len(r.prestarts) != 1 {
		t.Fatalf("prestarts = %d, want 1", len(r.prestarts))
	}

	withImage := turn
	withImage.Prompt, withImage.Images = "look", []Image{{MimeType: "image/png", Data: pngBytes(t)}}
	if err := b.Run(context.Background(), withImage, discardOutput{}); err != nil {
		t.Fatal(err)
	}
	if len(r.runs[0].Images) != 1 {
		t.Errorf("image turn ran without its image: %+v", r.runs[0])
	}
	if sameCommand(r.runs[0], r.prestarts[0]) {
		t.Error("the image turn's command is the waiting codex's: the runner would hand it the turn")
	}
	if len(r.discards) != 0 {
		t.Errorf("waiting codex discarded by an image turn: %d", len(r.discards))
	}
	b.Prepare(turn) // after the turn: the waiting one is still right
	waitPrestarts(t, b)
	if len(r.prestarts) != 1 {
		t.Errorf("prestarts = %d after the image turn, want the first still waiting", len(r.prestarts))
	}

	plain := turn
	plain.Prompt = "and now?"
	if err := b.Run(context.Background(), plain, discardOutput{}); err != nil {
		t.Fatal(err)
	}
	if !sameCommand(r.runs[1], r.prestarts[0]) || len(r.discards) != 0 {
		t.Errorf("the next turn did not take the waiting codex: %+v", r.runs[1])
	}

	// Settings changed: the waiting codex is of no use to an image turn either.
	b.Prepare(turn)
	waitPrestarts(t, b)
	changed := withImage
	changed.Mode = ModeAuto
	if err := b.Run(context.Background(), changed, discardOutput{}); err != nil {
		t.Fatal(err)
	}
	if len(r.discards) != 1 {
		t.Errorf("discards = %d, want the stale waiting codex ended", len(r.discards))
	}
}

func TestAppServerInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn Turn
		want []any
	}{
		{"text", Turn{Prompt: "hi"}, []any{map[string]any{"type": "text", "text": "hi"}}},
		{"images first", Turn{Prompt: "what is this?", Images: []Image{
			{MimeType: "image/png", Data: pngBytes(t)},
			{MimeType: "image/png", Path: "/home/u/shot.png"},
		}}, []any{
			map[string]any{"type": "image", "url": "data:image/png;base64," + pngBase64},
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

// /review and /compact take no images: a prompt with some is refused with
// a clear error, and codex does not run.
func TestCommandTurnRefusesImages(t *testing.T) {
	be := &cmdBackend{feats: featReview | featCompact}
	h := startAgent(t, be, fakeeditor.Options{})
	sid := h.newSession(t, t.TempDir())
	img := acpsdk.ImageBlock(base64.StdEncoding.EncodeToString(pngBytes(t)), "image/png")
	for _, cmd := range []string{"/review look at this", "/compact"} {
		_, err := h.editor.Conn.Prompt(h.ctx, acpsdk.PromptRequest{SessionId: sid, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock(cmd), img}})
		var re *acpsdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "takes no images") {
			t.Errorf("%s with an image: %v, want -32602 saying it takes no images", cmd, err)
		}
	}
	if n := be.turnCount(); n != 0 {
		t.Errorf("codex ran %d turns", n)
	}
}
