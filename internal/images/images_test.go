package images

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/internal/testkit"
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

// discardLogger is testkit.DiscardLogger, under the name these tests use.
var discardLogger = testkit.DiscardLogger

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
			img, err := FromBlock(block)
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
	_, err := FromBlock(&acpsdk.ContentBlockImage{Type: "image", MimeType: "image/png", Uri: &uri})
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
			files, err := WriteFiles(context.Background(), root, tc.imgs)
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
	_, err := WriteFiles(context.Background(), root, []Image{{MimeType: "image/png", Data: pngBytes(t)}, {MimeType: "image/png", Path: missing + ",x"}})
	if err == nil || !strings.Contains(err.Error(), "writing the prompt's images") {
		t.Fatalf("err = %v", err)
	}
	if left, _ := os.ReadDir(root); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if _, err := WriteFiles(context.Background(), filepath.Join(root, "no", "such"), []Image{{MimeType: "image/png", Data: pngBytes(t)}}); err == nil {
		t.Error("no error writing under a missing directory")
	}
}
