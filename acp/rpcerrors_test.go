package acp

import (
	"errors"
	"fmt"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// The codes the agent names itself are the SDK's.
func TestRPCErrorCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		got  int
		want *acpsdk.RequestError
	}{
		{"method not found", codeMethodNotFound, acpsdk.NewMethodNotFound("x")},
		{"invalid params", invalidParams("x").Code, acpsdk.NewInvalidParams(nil)},
		{"internal error", internalError("x").Code, acpsdk.NewInternalError(nil)},
	} {
		if tc.got != tc.want.Code {
			t.Errorf("%s: code %d, want %d", tc.name, tc.got, tc.want.Code)
		}
	}
	if e := invalidParams("mode must be one of a, b"); e.Message != "Invalid params: mode must be one of a, b" || e.Data != nil {
		t.Errorf("invalidParams = %+v", e)
	}
}

// Editor errors are judged by code, then by structured data, and by their
// words only when that is all there is.
func TestClassifyEditorError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want editorFault
	}{
		// By code: ACP's Resource not found, whatever the words.
		{"resource not found", &acpsdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"uri": "/a"}}, faultNotFound},
		{"resource not found, odd words", &acpsdk.RequestError{Code: -32002, Message: "permission denied"}, faultNotFound},
		// By data: a Node error serialised whole.
		{"data code EACCES", &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"code": "EACCES", "errno": -13}}, faultDenied},
		{"data code EROFS", &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"code": "EROFS"}}, faultReadOnly},
		{"data code beats words", &acpsdk.RequestError{Code: -32603, Message: "no such file or directory", Data: map[string]any{"code": "EISDIR"}}, faultIsDirectory},
		// Words, last resort: the Node SDK (acpx) sends only {"details": message}.
		{"acpx ENOENT", &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "ENOENT: no such file or directory, open '/w/a'"}}, faultNotFound},
		{"acpx EACCES", &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "EACCES: permission denied, open '/w/a'"}}, faultDenied},
		{"acpx EROFS", &acpsdk.RequestError{Code: -32603, Message: "EROFS: read-only file system"}, faultReadOnly},
		{"acpx ENOSPC", &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "ENOSPC: no space left on device, write"}}, faultDiskFull},
		{"acpx refusal", &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: map[string]any{"details": "Permission denied for fs/write_text_file"}}, faultDenied},
		{"rust io error", &acpsdk.RequestError{Code: -32603, Message: "Internal error", Data: "No such file or directory (os error 2)"}, faultNotFound},
		{"rust is a directory", &acpsdk.RequestError{Code: -32603, Message: "Is a directory (os error 21)"}, faultIsDirectory},
		// Neither: the editor's words go to the model as they are.
		{"other", &acpsdk.RequestError{Code: -32603, Message: "buffer is locked"}, faultOther},
		{"errno-like word inside another", &acpsdk.RequestError{Code: -32603, Message: "XENOENTX happened"}, faultOther},
		{"english near miss", &acpsdk.RequestError{Code: -32603, Message: "the buffer was not found in the cache"}, faultOther},
		{"not a RequestError", fmt.Errorf("write: %w", errors.New("EACCES: permission denied")), faultDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classifyEditorError(tc.err, editorWords(tc.err)); got != tc.want {
				t.Errorf("fault %d, want %d (words %q)", got, tc.want, editorWords(tc.err))
			}
		})
	}
}
