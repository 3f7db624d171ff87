package agents

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tool is one tool an agent may call.
type tool struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // JSON Schema of the arguments
	URL         string          `json:"url,omitempty"`        // agentd POSTs the call here (conversations)
}

// Tool limits: a schema is a small document; a URL a plain one.
const (
	maxToolParameters = 16 << 10
	maxToolURL        = 2048
)

// validateTools checks the tools array: objects with string id, name and
// description only; id and name non-empty, ids unique; and {type: "mcp"}
// entries (mcp.go).
func validateTools(raw json.RawMessage) (json.RawMessage, error) {
	if !present(raw) {
		return json.RawMessage("[]"), nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalidf("tools", "must be an array of {id, name, description}")
	}
	if len(items) > maxTools {
		return nil, invalidf("tools", "at most %d tools", maxTools)
	}
	tools := make([]any, 0, len(items))
	seen := map[string]bool{}
	servers := map[string]bool{} // mcp entries' names
	for i, item := range items {
		path := "tools." + itoa(i)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(item, &m); err != nil || m == nil {
			return nil, invalidf(path, "must be an object {id, name, description}")
		}
		if _, ok := m["type"]; ok {
			t, err := validateMCP(path, m)
			if err != nil {
				return nil, err
			}
			if servers[t.Name] {
				return nil, invalidf(path+".name", "%q is used by another mcp tool", t.Name)
			}
			if len(servers) == MaxMCPServers {
				return nil, invalidf(path, "at most %d mcp tools", MaxMCPServers)
			}
			servers[t.Name] = true
			tools = append(tools, t)
			continue
		}
		var t tool
		for k, v := range m {
			var dst *string
			switch k {
			case "parameters":
				p, err := validateParameters(path+".parameters", v)
				if err != nil {
					return nil, err
				}
				t.Parameters = p
				continue
			case "url":
				u, err := validateToolURL(path+".url", v)
				if err != nil {
					return nil, err
				}
				t.URL = u
				continue
			case "id":
				dst = &t.ID
			case "name":
				dst = &t.Name
			case "description":
				dst = &t.Description
			default:
				return nil, invalidf(path+"."+k, "unknown key (a tool has id, name, description, parameters, url)")
			}
			if err := json.Unmarshal(v, dst); err != nil || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
				return nil, invalidf(path+"."+k, "must be a string")
			}
		}
		switch {
		case strings.TrimSpace(t.ID) == "":
			return nil, invalidf(path+".id", "required")
		case strings.TrimSpace(t.Name) == "":
			return nil, invalidf(path+".name", "required")
		case utf8.RuneCountInString(t.ID) > maxToolText || utf8.RuneCountInString(t.Name) > maxToolText:
			return nil, invalidf(path, "id and name at most %d characters", maxToolText)
		case utf8.RuneCountInString(t.Description) > maxToolDescription:
			return nil, invalidf(path+".description", "at most %d characters", maxToolDescription)
		case seen[t.ID]:
			return nil, invalidf(path+".id", "%q is used by another tool", t.ID)
		}
		seen[t.ID] = true
		tools = append(tools, t)
	}
	return json.Marshal(tools)
}

// itoa is an index in a field path ("tools.3").
func itoa(i int) string { return strconv.Itoa(i) }

// validateParameters checks a tool's JSON Schema: an object (the model
// receives it as the function's parameters), at most 16 KB.
func validateParameters(path string, raw json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, invalidf(path, "must be a JSON Schema object")
	}
	if t, ok := m["type"]; ok && t != "object" {
		return nil, invalidf(path+".type", "must be \"object\" (a function's arguments are an object)")
	}
	b, err := json.Marshal(m)
	if err != nil || len(b) > maxToolParameters {
		return nil, invalidf(path, "at most %d bytes", maxToolParameters)
	}
	return b, nil
}

// validateToolURL checks where a url tool is called: an absolute http or
// https URL. Where it points is checked at call time, by the same guard
// as webhooks (internal/safehttp).
func validateToolURL(path string, raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalidf(path, "must be a string")
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		return "", invalidf(path, "must be an http or https URL")
	case len(s) > maxToolURL:
		return "", invalidf(path, "at most %d characters", maxToolURL)
	case u.User != nil:
		return "", invalidf(path, "must not hold credentials (requests are signed)")
	}
	return s, nil
}
