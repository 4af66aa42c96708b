package fsops

import (
	"context"
	"errors"
)

// Engine runs the file tools against a Files port.
type Engine struct {
	files Files
}

// NewEngine returns an engine that reads and writes through files.
func NewEngine(files Files) *Engine { return &Engine{files: files} }

var errPending = errors.New("fsops: engine being implemented")

// ReadTextFile implements read_text_file.
func (e *Engine) ReadTextFile(ctx context.Context, p ReadParams) (*ReadResult, error) {
	return nil, errPending
}

// WriteTextFile implements write_text_file.
func (e *Engine) WriteTextFile(ctx context.Context, p WriteParams, before BeforeWrite) (*WriteResult, error) {
	return nil, errPending
}

// EditTextFile implements edit_text_file.
func (e *Engine) EditTextFile(ctx context.Context, p EditParams, before BeforeWrite) (*EditResult, error) {
	return nil, errPending
}

// MultiEditTextFile implements multi_edit_text_file.
func (e *Engine) MultiEditTextFile(ctx context.Context, p MultiEditParams, before BeforeWrite) (*MultiEditResult, error) {
	return nil, errPending
}

// ReplaceTextLines implements replace_text_lines.
func (e *Engine) ReplaceTextLines(ctx context.Context, p ReplaceLinesParams, before BeforeWrite) (*LinesResult, error) {
	return nil, errPending
}

// InsertTextLines implements insert_text_lines.
func (e *Engine) InsertTextLines(ctx context.Context, p InsertLinesParams, before BeforeWrite) (*LinesResult, error) {
	return nil, errPending
}

// AppendTextFile implements append_text_file.
func (e *Engine) AppendTextFile(ctx context.Context, p AppendParams, before BeforeWrite) (*LinesResult, error) {
	return nil, errPending
}

// AsError returns err as a tool *Error.
func AsError(err error) *Error {
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	return &Error{Code: -32603, Message: "Internal error: " + err.Error(), Err: err}
}
