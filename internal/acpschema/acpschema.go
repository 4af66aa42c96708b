// Package acpschema checks JSON that codexacp sends or receives against the
// ACP JSON schema shipped with github.com/coder/acp-go-sdk, for tests.
//
// The schema files are embedded copies of the module's schema/schema.json
// and schema/schema.unstable.json (a test keeps them equal). Values are
// checked against the stable schema unless they use something only the
// unstable one defines (a method, or a session update such as usage_update).
package acpschema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

var (
	//go:embed testdata/schema.json
	stableJSON []byte
	//go:embed testdata/schema.unstable.json
	unstableJSON []byte
)

// schemaFile is one of the two ACP schema files, with resolved schemas for
// the definitions asked for so far.
type schemaFile struct {
	name string
	src  []byte

	once     sync.Once
	err      error
	root     *jsonschema.Schema // the file, parsed once; never resolved itself
	defs     map[string]*jsonschema.Schema
	methods  map[string]string // "session/update notification" → definition name
	variants map[string]*jsonschema.Schema

	mu       sync.Mutex
	resolved map[string]*jsonschema.Resolved
}

var (
	stable   = &schemaFile{name: "schema.json", src: stableJSON}
	unstable = &schemaFile{name: "schema.unstable.json", src: unstableJSON}
)

func (f *schemaFile) load() error {
	f.once.Do(func() {
		var root jsonschema.Schema
		if err := json.Unmarshal(f.src, &root); err != nil {
			f.err = fmt.Errorf("acpschema: decode %s: %w", f.name, err)
			return
		}
		f.root, f.defs = &root, root.Defs
		f.methods = map[string]string{}
		for name, def := range root.Defs {
			method, _ := def.Extra["x-method"].(string)
			if method == "" {
				continue
			}
			for _, kind := range []string{"Request", "Response", "Notification"} {
				if strings.HasSuffix(name, kind) {
					f.methods[method+" "+strings.ToLower(kind)] = name
				}
			}
		}
		f.variants = map[string]*jsonschema.Schema{}
		if su := root.Defs["SessionUpdate"]; su != nil {
			for _, v := range su.OneOf {
				if p := v.Properties["sessionUpdate"]; p != nil && p.Const != nil {
					if disc, ok := (*p.Const).(string); ok {
						f.variants[disc] = v
					}
				}
			}
		}
		f.resolved = map[string]*jsonschema.Resolved{}
	})
	return f.err
}

// resolve returns the resolved schema of a definition, or of the
// SessionUpdate variant with the given discriminator ("sessionUpdate:plan").
func (f *schemaFile) resolve(key string) (*jsonschema.Resolved, error) {
	if err := f.load(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if rs := f.resolved[key]; rs != nil {
		return rs, nil
	}
	// A fresh copy of the whole file for every root: resolving must not
	// share schema values with another resolved root. Cloning the parsed
	// file costs a fraction of parsing it again.
	s := (&jsonschema.Schema{Schema: f.root.Schema, Defs: f.root.Defs}).CloneSchemas()
	if disc, ok := strings.CutPrefix(key, "sessionUpdate:"); ok {
		var variant *jsonschema.Schema
		for _, v := range s.Defs["SessionUpdate"].OneOf {
			if p := v.Properties["sessionUpdate"]; p != nil && p.Const != nil && *p.Const == disc {
				variant = v
			}
		}
		if variant == nil {
			return nil, fmt.Errorf("acpschema: %s has no session update %q", f.name, disc)
		}
		// A copy, as the schema values must form a tree.
		s.AllOf = []*jsonschema.Schema{variant.CloneSchemas()}
	} else {
		if s.Defs[key] == nil {
			return nil, fmt.Errorf("acpschema: %s has no definition %q", f.name, key)
		}
		s.Ref = "#/$defs/" + key
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("acpschema: resolve %s in %s: %w", key, f.name, err)
	}
	f.resolved[key] = rs
	return rs, nil
}

func (f *schemaFile) validate(key string, v any) error {
	rs, err := f.resolve(key)
	if err != nil {
		return err
	}
	if err := rs.Validate(v); err != nil {
		return fmt.Errorf("invalid %s (%s): %w", key, f.name, err)
	}
	return nil
}

// fileFor picks the stable schema unless only the unstable one has the
// definition.
func fileFor(def string) (*schemaFile, error) {
	if err := stable.load(); err != nil {
		return nil, err
	}
	if stable.defs[def] != nil {
		return stable, nil
	}
	if err := unstable.load(); err != nil {
		return nil, err
	}
	if unstable.defs[def] != nil {
		return unstable, nil
	}
	return nil, fmt.Errorf("acpschema: no definition %q", def)
}

// ValidateDefinition checks value (JSON) against the schema definition
// name, for example "PromptResponse" or "ToolCallContent".
func ValidateDefinition(name string, value []byte) error {
	v, err := decode(value)
	if err != nil {
		return err
	}
	f, err := fileFor(name)
	if err != nil {
		return err
	}
	return f.validate(name, v)
}

// ValidateSessionUpdate checks one session update (the "update" member of
// session/update params): it must have exactly one "sessionUpdate"
// discriminator naming a known variant, and match that variant's schema.
func ValidateSessionUpdate(update []byte) error {
	v, err := decode(update)
	if err != nil {
		return err
	}
	f, disc, err := updateFile(update, v)
	if err != nil {
		return err
	}
	return f.validate("sessionUpdate:"+disc, v)
}

// updateFile checks the discriminator of a session update and returns the
// schema file that defines its variant.
func updateFile(raw []byte, v any) (*schemaFile, string, error) {
	n, err := countKeys(raw, "sessionUpdate")
	if err != nil {
		return nil, "", err
	}
	if n != 1 {
		return nil, "", fmt.Errorf("session update has %d \"sessionUpdate\" members, want 1", n)
	}
	m, _ := v.(map[string]any)
	disc, ok := m["sessionUpdate"].(string)
	if !ok {
		return nil, "", errors.New("session update: \"sessionUpdate\" is not a string")
	}
	for _, f := range []*schemaFile{stable, unstable} {
		if err := f.load(); err != nil {
			return nil, "", err
		}
		if f.variants[disc] != nil {
			return f, disc, nil
		}
	}
	return nil, "", fmt.Errorf("unknown sessionUpdate %q", disc)
}

// ValidateMessage checks one JSON-RPC message of the ACP connection.
// Requests and notifications are checked against the params definition of
// their method (extension methods, "_…", only need an object or no params);
// a session/update's update as by ValidateSessionUpdate. A response's
// envelope and error object are checked; its result needs the method of the
// request it answers: use ValidateResponse.
func ValidateMessage(msg []byte) error {
	env, err := envelope(msg)
	if err != nil {
		return err
	}
	if env.Method == nil {
		return validateResponseEnvelope(env)
	}
	method := *env.Method
	if strings.HasPrefix(method, "_") {
		if len(env.Params) > 0 && !bytes.Equal(env.Params, []byte("null")) && env.Params[0] != '{' {
			return fmt.Errorf("%s: params must be an object", method)
		}
		return nil
	}
	kind := "notification"
	if len(env.ID) > 0 {
		kind = "request"
	}
	params, err := decode(env.Params)
	if err != nil {
		return fmt.Errorf("%s params: %w", method, err)
	}
	f := stable
	if method == "session/update" {
		// The variant decides which file: usage_update is unstable only.
		var p struct {
			Update json.RawMessage `json:"update"`
		}
		if err := json.Unmarshal(env.Params, &p); err != nil || len(p.Update) == 0 {
			return errors.New("session/update: params have no update")
		}
		// Checked on its own first: errors against one variant are clearer
		// than "oneOf: did not validate against any".
		if err := ValidateSessionUpdate(p.Update); err != nil {
			return fmt.Errorf("session/update: %w", err)
		}
		uv, err := decode(p.Update)
		if err != nil {
			return err
		}
		if f, _, err = updateFile(p.Update, uv); err != nil {
			return fmt.Errorf("session/update: %w", err)
		}
	}
	file, err := methodDef(f, method, kind)
	if err != nil {
		return err
	}
	return file.validate(file.methods[method+" "+kind], params)
}

// ValidateResponse checks a response to a request of the given method:
// the envelope, and the result against the method's response definition.
func ValidateResponse(method string, msg []byte) error {
	env, err := envelope(msg)
	if err != nil {
		return err
	}
	if env.Method != nil {
		return fmt.Errorf("not a response: has method %q", *env.Method)
	}
	if err := validateResponseEnvelope(env); err != nil || env.Result == nil {
		return err
	}
	result, err := decode(env.Result)
	if err != nil {
		return fmt.Errorf("%s result: %w", method, err)
	}
	file, err := methodDef(stable, method, "response")
	if err != nil {
		return err
	}
	return file.validate(file.methods[method+" response"], result)
}

// methodDef returns the file (preferring f, then the unstable one) that
// defines the method's request, response or notification.
func methodDef(f *schemaFile, method, kind string) (*schemaFile, error) {
	for _, g := range []*schemaFile{f, unstable} {
		if err := g.load(); err != nil {
			return nil, err
		}
		if g.methods[method+" "+kind] != "" {
			return g, nil
		}
	}
	return nil, fmt.Errorf("unknown ACP %s method %q", kind, method)
}

type rpcEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

func envelope(msg []byte) (rpcEnvelope, error) {
	var env rpcEnvelope
	if err := json.Unmarshal(msg, &env); err != nil {
		return env, fmt.Errorf("not a JSON-RPC message: %w", err)
	}
	if env.JSONRPC != "2.0" {
		return env, fmt.Errorf("jsonrpc is %q, want \"2.0\"", env.JSONRPC)
	}
	return env, nil
}

func validateResponseEnvelope(env rpcEnvelope) error {
	if len(env.ID) == 0 {
		return errors.New("response without id")
	}
	if (env.Result == nil) == (env.Error == nil) {
		return errors.New("response must have exactly one of result and error")
	}
	if env.Error == nil {
		return nil
	}
	v, err := decode(env.Error)
	if err != nil {
		return err
	}
	return stable.validate("Error", v)
}

// decode parses JSON for the validator (objects as map[string]any).
func decode(b []byte) (any, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return v, nil
}

// countKeys counts the members named key of the top-level JSON object obj
// (json.Unmarshal silently keeps the last of duplicates).
func countKeys(obj []byte, key string) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, errors.New("not a JSON object")
	}
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0, fmt.Errorf("invalid JSON: %w", err)
		}
		if tok == key {
			n++
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return 0, fmt.Errorf("invalid JSON: %w", err)
		}
	}
	return n, nil
}
