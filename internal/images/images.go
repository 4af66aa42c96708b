// Package images checks the images of a prompt and hands them to codex:
// an ACP image block becomes an [Image] (inline data or the user's file,
// its type sniffed from its bytes, its size bounded), and [WriteFiles]
// writes a turn's images as the files `codex exec --image` takes, in a
// private directory the turn removes. [Sweep] removes at start-up the
// directories an agent killed mid-turn left behind.
package images

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/codexacp/codexacp/internal/regularfile"
)

// maxImageBytes bounds one image of a prompt, decoded: the per-image limit
// of OpenAI's vision input. An image sent inline is bounded further by the
// 10 MiB message limit (internal/stdioguard): about 7.5 MiB once base64-encoded.
const maxImageBytes = 20 << 20

// imageTypes are the image formats the model reads; by the type an image's
// bytes show (http.DetectContentType), whatever the block declares.
var imageTypes = map[string]string{
	"image/png":  ".png",
	"image/jpeg": ".jpg",
	"image/gif":  ".gif",
	"image/webp": ".webp",
}

const acceptedImageTypes = "image/png, image/jpeg, image/gif, image/webp"

// Image is an image of a prompt, checked: its bytes are one of imageTypes
// and at most maxImageBytes. It is either inline (Data) or a file of the
// user's (Path), which codex reads itself and names to the model.
type Image struct {
	MimeType string // as sniffed from the bytes
	Data     []byte // decoded; nil when Path is set
	Path     string // absolute; empty when Data is set
}

// DataURL is the image inline, as the Responses API and the app-server's
// image input take it.
func (img Image) DataURL() string {
	return "data:" + img.MimeType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

// FromBlock checks an ACP image block and returns it ready for codex: the
// block's base64 data, or, without data, the file its file:// URI names.
// Errors say what is wrong in the user's terms.
func FromBlock(b *acpsdk.ContentBlockImage) (Image, error) {
	declared, _, _ := mime.ParseMediaType(b.MimeType)
	if declared == "image/jpg" {
		declared = "image/jpeg"
	}
	if b.Data == "" && b.Uri != nil && *b.Uri != "" {
		return imageFile(*b.Uri)
	}
	if _, ok := imageTypes[declared]; !ok {
		return Image{}, fmt.Errorf("unsupported image type %q (accepted: %s)", b.MimeType, acceptedImageTypes)
	}
	if b.Data == "" {
		return Image{}, errors.New("the image has neither data nor a file:// URI")
	}
	// Checked before decoding: the bound is on the decoded size.
	if base64.StdEncoding.DecodedLen(len(b.Data)) > maxImageBytes+3 {
		return Image{}, fmt.Errorf("the image is larger than %d MiB", maxImageBytes>>20)
	}
	data, err := decodeBase64(b.Data)
	if err != nil {
		return Image{}, fmt.Errorf("the image data is not valid base64: %v", err)
	}
	if len(data) > maxImageBytes {
		return Image{}, fmt.Errorf("the image is larger than %d MiB", maxImageBytes>>20)
	}
	kind, err := sniffImage(data)
	if err != nil {
		return Image{}, fmt.Errorf("the image data %v", err)
	}
	return Image{MimeType: kind, Data: data}, nil
}

// decodeBase64 decodes standard base64, padded or not (line breaks are
// ignored by the decoder).
func decodeBase64(s string) ([]byte, error) {
	data, err := base64.StdEncoding.DecodeString(s)
	if err == nil {
		return data, nil
	}
	if raw, rawErr := base64.RawStdEncoding.DecodeString(s); rawErr == nil {
		return raw, nil
	}
	return nil, err
}

// sniffImage returns the accepted image type data's first bytes show.
func sniffImage(data []byte) (string, error) {
	kind := http.DetectContentType(data)
	if _, ok := imageTypes[kind]; !ok {
		return "", fmt.Errorf("is not a PNG, JPEG, GIF or WebP image (its bytes look like %s; accepted: %s)", kind, acceptedImageTypes)
	}
	return kind, nil
}

// imageFile checks the image file a file:// URI names: an absolute path on
// this machine to a regular file within maxImageBytes, whose bytes are an
// accepted image. The open does not wait and what it opened is checked on
// the descriptor: a FIFO (which would hold the prompt until a writer came)
// or a device is refused at once, also behind a link. Anywhere on disk is
// fine, links included: it is the user's own file, picked in their editor,
// and codex's sandbox reads the whole disk anyway.
func imageFile(uri string) (Image, error) {
	path, err := filePath(uri)
	if err != nil {
		return Image{}, err
	}
	f, info, err := regularfile.Open(path, regularfile.FollowLink)
	var notRegular *regularfile.NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Image{}, fmt.Errorf("image file %s does not exist", path)
	case errors.As(err, &notRegular):
		return Image{}, fmt.Errorf("image %s is not a regular file (%s)", path, regularfile.Kind(notRegular.Mode))
	case err != nil:
		return Image{}, fmt.Errorf("image file %s cannot be read: %w", path, err)
	}
	defer f.Close()
	if info.Size() > maxImageBytes {
		return Image{}, fmt.Errorf("image file %s is larger than %d MiB", path, maxImageBytes>>20)
	}
	head := make([]byte, 512) // all http.DetectContentType looks at
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return Image{}, fmt.Errorf("image file %s cannot be read: %w", path, err)
	}
	kind, err := sniffImage(head[:n])
	if err != nil {
		return Image{}, fmt.Errorf("image file %s %v", path, err)
	}
	return Image{MimeType: kind, Path: path}, nil
}

// filePath is the local path of a file:// URI.
func filePath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("image URI %q is not a valid URI: %v", uri, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("image URI %q is not a file:// URI; send other images as base64 data", uri)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("image URI %q names another host (%s); only local files can be read", uri, u.Host)
	}
	p := u.Path
	if runtime.GOOS == "windows" && len(p) > 2 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // file:///C:/x
	}
	p = filepath.FromSlash(p)
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("image URI %q has no absolute path", uri)
	}
	return filepath.Clean(p), nil
}

// Files are a turn's images as files for `codex exec --image`: the
// user's own files as they are, inline images written to a private
// directory (0700, files 0600) that Remove deletes.
type Files struct {
	Paths []string
	dir   string // empty when nothing was written
}

// WriteFiles makes imgs files in a new directory under root (empty:
// the system's temporary directory). A path codex cannot take (one with a
// comma: codex splits --image on commas) is copied there too. On error,
// or when ctx ends (session/cancel), nothing is left behind.
func WriteFiles(ctx context.Context, root string, imgs []Image) (*Files, error) {
	files := &Files{}
	for i, img := range imgs {
		if err := ctx.Err(); err != nil {
			files.Remove()
			return nil, fmt.Errorf("writing the prompt's images: %w", context.Cause(ctx))
		}
		if img.Path != "" && !strings.Contains(img.Path, ",") {
			files.Paths = append(files.Paths, img.Path)
			continue
		}
		if files.dir == "" {
			dir, err := os.MkdirTemp(root, imageDirPrefix)
			if err != nil {
				return nil, fmt.Errorf("writing the prompt's images: %w", err)
			}
			files.dir = dir
		}
		path := filepath.Join(files.dir, fmt.Sprintf("image-%d%s", i+1, imageTypes[img.MimeType]))
		if err := writeImageFile(ctx, path, img); err != nil {
			files.Remove()
			return nil, fmt.Errorf("writing the prompt's images: %w", err)
		}
		files.Paths = append(files.Paths, path)
	}
	return files, nil
}

func writeImageFile(ctx context.Context, path string, img Image) error {
	f, err := regularfile.Create(path, 0o600, true)
	if err != nil {
		return err
	}
	if img.Data != nil {
		_, err = f.Write(img.Data)
	} else {
		err = copyFile(ctx, f, img.Path)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// copyFile copies the user's image at src (checked by imageFile, but it
// may have been swapped since: opened as imageFile opens it) to dst, at
// most maxImageBytes, stopping when ctx ends.
func copyFile(ctx context.Context, dst io.Writer, src string) error {
	f, _, err := regularfile.Open(src, regularfile.FollowLink)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(dst, ctxReader{ctx, io.LimitReader(f, maxImageBytes)})
	return err
}

// ctxReader reads from r until ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(p)
}

// Remove deletes what WriteFiles wrote; the user's files stay.
func (f *Files) Remove() error {
	if f == nil || f.dir == "" {
		return nil
	}
	return os.RemoveAll(f.dir)
}
