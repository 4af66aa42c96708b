package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
)

// maxLineBytes is the largest inbound message passed on to the SDK. The SDK
// closes the whole connection on a longer line; we answer it with an error
// instead and keep serving.
const maxLineBytes = 10*1024*1024 - 1

// syncWriter serialises whole-message writes from the SDK and from the input
// guard, so a guard error response never interleaves with an SDK message.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// guardInput copies JSON-RPC lines from in to out (the SDK's input) and
// answers the ones the SDK would silently drop or choke on: invalid JSON gets
// a -32700 parse error, a JSON value that is not a request, notification or
// response gets -32600, and a line over the SDK's limit gets -32600 instead of
// closing the connection. It returns when in ends, closing out.
func guardInput(in io.Reader, out *io.PipeWriter, reply io.Writer, log *slog.Logger) {
	r := bufio.NewReaderSize(in, 64*1024)
	var err error
	for err == nil {
		var line []byte
		line, err = readLine(r, maxLineBytes)
		if errors.Is(err, errLineTooLong) {
			log.Error("inbound message too large", "limit", maxLineBytes)
			writeError(reply, nil, -32600, "Invalid Request: message larger than 10 MiB")
			err = nil
			continue
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			continue
		}
		if code, msg, id := checkMessage(trimmed); code != 0 {
			log.Warn("rejected inbound message", "code", code, "reason", msg)
			writeError(reply, id, code, msg)
			continue
		}
		if _, werr := out.Write(append(trimmed, '\n')); werr != nil {
			break
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		out.CloseWithError(err)
		return
	}
	out.Close()
}

var errLineTooLong = errors.New("line too long")

// readLine reads one '\n'-terminated line of at most max bytes. A longer line
// is consumed to its end and reported as errLineTooLong.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1 for the newline
				tooLong = true
				line = nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil && len(line) == 0 && !tooLong:
			return nil, err
		case tooLong:
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
		default:
			// A final line without '\n' is still a message; EOF comes next call.
			return line, nil
		}
	}
}

// checkMessage returns a JSON-RPC error code and message for a line the SDK
// cannot handle, or 0 when the line is a well-formed message. The id, when one
// can be read, is echoed in the error response.
func checkMessage(line []byte) (int, string, json.RawMessage) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if !json.Valid(line) {
		return -32700, "Parse error: invalid JSON", nil
	}
	if line[0] != '{' {
		return -32600, "Invalid Request: a JSON-RPC message must be an object", nil
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		return -32600, "Invalid Request: " + err.Error(), nil
	}
	id := msg.ID
	if len(id) > 0 && !validID(id) {
		return -32600, "Invalid Request: id must be a string, number or null", nil
	}
	switch {
	case msg.Method != nil && *msg.Method == "":
		return -32600, "Invalid Request: empty method", id
	case msg.Method != nil:
		return 0, "", nil
	case len(id) > 0 && (msg.Result != nil || msg.Error != nil):
		return 0, "", nil // a response to one of our requests
	default:
		return -32600, "Invalid Request: no method", id
	}
}

func validID(id json.RawMessage) bool {
	switch id[0] {
	case '"', 'n':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

func writeError(w io.Writer, id json.RawMessage, code int, message string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(errorResponse{JSONRPC: "2.0", ID: id, Error: rpcError{code, message}})
	if err != nil {
		return
	}
	_, _ = w.Write(append(b, '\n'))
}
