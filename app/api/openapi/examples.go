// Package openapi holds the examples of the OpenAPI document the package app
// serves, and attaches them to its operations. Examples live apart from the
// fragments (app/openapi/<feature>.json), in examples/<feature>.json: an
// object keyed by operationId. Requests and success bodies are written there
// (taken from real answers of the tests); error bodies are built by the
// caller from a status and message, so each family's shape cannot drift.
package openapi

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed examples/*.json
var examplesFS embed.FS

// Examples are one operation's examples.
type Examples struct {
	// Request is the request body's example (every media type).
	Request json.RawMessage `json:"request"`
	// Responses are success bodies by status ("201").
	Responses map[string]json.RawMessage `json:"responses"`
	// Errors are error examples by status: a message the family's shape
	// wraps, or a whole body when the answer carries more (details).
	Errors map[string]json.RawMessage `json:"errors"`
}

// ErrorBody builds the example body of an error status from what the
// examples file gives (a JSON message, a whole body, or nothing).
type ErrorBody func(status string, given json.RawMessage) (json.RawMessage, error)

// LoadExamples reads every examples file, keyed by operationId.
func LoadExamples() (map[string]Examples, error) {
	names, err := fs.Glob(examplesFS, "examples/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := map[string]Examples{}
	for _, n := range names {
		b, err := examplesFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var m map[string]Examples
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		for op, ex := range m {
			if _, dup := out[op]; dup {
				return nil, fmt.Errorf("%s: examples of %s given twice", n, op)
			}
			out[op] = ex
		}
	}
	return out, nil
}

// Attach puts the examples on op (a decoded operation object): the request
// body's, the success responses' and one per error response. An error
// response given by reference to a shared component (except RateLimited,
// one body everywhere) is inlined so its example says what that status means
// on this route.
func Attach(op map[string]any, ex Examples, shared map[string]json.RawMessage, errorBody ErrorBody) error {
	if len(ex.Request) > 0 {
		content, _ := lookup(op, "requestBody", "content").(map[string]any)
		if len(content) == 0 {
			return fmt.Errorf("a request example but no request body")
		}
		if err := setExample(content, ex.Request); err != nil {
			return err
		}
	}
	resps, _ := op["responses"].(map[string]any)
	for code, raw := range ex.Responses {
		content, _ := lookup(resps, code, "content").(map[string]any)
		if len(content) == 0 {
			return fmt.Errorf("an example for response %s, which has no body", code)
		}
		if err := setExample(content, raw); err != nil {
			return err
		}
	}
	for code := range ex.Errors {
		if _, ok := resps[code]; !ok {
			return fmt.Errorf("an error example for %s, which the operation does not list", code)
		}
	}
	for code, r := range resps {
		if code[0] != '4' && code[0] != '5' {
			continue
		}
		rm, _ := r.(map[string]any)
		if ref, ok := rm["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/components/responses/")
			if name == "RateLimited" {
				continue
			}
			rm = nil
			if err := json.Unmarshal(shared[name], &rm); err != nil {
				return fmt.Errorf("response %s: %s: %w", code, ref, err)
			}
			resps[code] = rm
		}
		content, _ := rm["content"].(map[string]any)
		if len(content) == 0 {
			continue
		}
		body, err := errorBody(code, ex.Errors[code])
		if err != nil {
			return fmt.Errorf("error example %s: %w", code, err)
		}
		if err := setExample(content, body); err != nil {
			return err
		}
	}
	return nil
}

// FinishShared gives the shared RateLimited response its example and drops
// the shared responses no operation refers to any more (all were inlined).
func FinishShared(shared map[string]json.RawMessage, paths any, rateLimited json.RawMessage) error {
	used, err := json.Marshal(paths)
	if err != nil {
		return err
	}
	for name, raw := range shared {
		if !bytes.Contains(used, []byte(`"#/components/responses/`+name+`"`)) {
			delete(shared, name)
			continue
		}
		if name != "RateLimited" {
			continue
		}
		var rm map[string]any
		if err := json.Unmarshal(raw, &rm); err != nil {
			return err
		}
		if content, ok := rm["content"].(map[string]any); ok {
			if err := setExample(content, rateLimited); err != nil {
				return err
			}
		}
		if shared[name], err = json.Marshal(rm); err != nil {
			return err
		}
	}
	return nil
}

// setExample gives every media type of content the example, unless its
// fragment already has one.
func setExample(content map[string]any, raw json.RawMessage) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	for _, mt := range content {
		m, _ := mt.(map[string]any)
		if m == nil {
			continue
		}
		_, one := m["example"]
		_, many := m["examples"]
		if !one && !many {
			m["example"] = v
		}
	}
	return nil
}

// lookup follows keys through nested JSON objects (nil when one is missing).
func lookup(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
