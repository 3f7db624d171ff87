package agents

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/secretbox"
	"github.com/agentd/agentd/storage/sqldb"
)

// An agent's {type: "mcp", name, url, headers?, allowedTools?} tools entry
// names an MCP server whose tools the model may call (issue 38). Header
// values are secrets: sealed at rest, shown once (the create or update
// answer that gave them), masked on every read; a masked value sent back
// keeps the stored one.

// Limits of mcp entries.
const (
	MaxMCPServers   = 8 // servers an agent's turn may connect to
	maxMCPHeaders   = 16
	maxHeaderValue  = 4096
	maxAllowedTools = 128
	// Masked is a header value as reads show it.
	Masked = "********"
)

// mcpTool is an mcp entry as stored and shown.
type mcpTool struct {
	Type         string            `json:"type"`
	Name         string            `json:"name"`
	URL          string            `json:"url"`
	Headers      map[string]string `json:"headers,omitempty"`
	AllowedTools []string          `json:"allowedTools,omitempty"`
}

var (
	mcpNameRE    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)
	headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$")
	// headers the transport sets itself
	reservedHeaders = map[string]bool{"host": true, "content-length": true, "content-type": true, "accept": true,
		"connection": true, "transfer-encoding": true, "upgrade": true, "te": true, "trailer": true,
		"mcp-session-id": true, "mcp-protocol-version": true, "last-event-id": true, "keep-alive": true}
)

// validateMCP checks one mcp entry.
func validateMCP(path string, m map[string]json.RawMessage) (mcpTool, error) {
	var t mcpTool
	for k, v := range m {
		var err error
		switch k {
		case "type":
			if json.Unmarshal(v, &t.Type) != nil || t.Type != "mcp" {
				return t, invalidf(path+".type", `must be "mcp" (url tools have no type)`)
			}
		case "name":
			if json.Unmarshal(v, &t.Name) != nil || !mcpNameRE.MatchString(t.Name) {
				return t, invalidf(path+".name", "required: 1 to 40 letters, digits, _ or - (tools are offered as mcp_<name>_<tool>)")
			}
		case "url":
			t.URL, err = validateToolURL(path+".url", v)
		case "headers":
			t.Headers, err = validateHeaders(path+".headers", v)
		case "allowedTools":
			t.AllowedTools, err = validateAllowed(path+".allowedTools", v)
		default:
			return t, invalidf(path+"."+k, "unknown key (an mcp tool has type, name, url, headers, allowedTools)")
		}
		if err != nil {
			return t, err
		}
	}
	switch {
	case t.Name == "":
		return t, invalidf(path+".name", "required")
	case t.URL == "":
		return t, invalidf(path+".url", "required: the MCP server's URL (streamable HTTP or SSE)")
	}
	return t, nil
}

func validateHeaders(path string, raw json.RawMessage) (map[string]string, error) {
	var h map[string]string
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, invalidf(path, "must be an object of header names to string values")
	}
	if len(h) > maxMCPHeaders {
		return nil, invalidf(path, "at most %d headers", maxMCPHeaders)
	}
	for k, v := range h {
		switch {
		case !headerNameRE.MatchString(k):
			return nil, invalidf(path, "%q is not a header name", k)
		case reservedHeaders[strings.ToLower(k)]:
			return nil, invalidf(path+"."+k, "is set by agentd")
		case (len(v) > maxHeaderValue && !secretbox.Sealed(v)) || !utf8.ValidString(v) || strings.ContainsAny(v, "\r\n\x00"):
			return nil, invalidf(path+"."+k, "must be one line of at most %d bytes", maxHeaderValue)
		}
	}
	return h, nil
}

func validateAllowed(path string, raw json.RawMessage) ([]string, error) {
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		return nil, invalidf(path, "must be an array of tool names")
	}
	if len(names) > maxAllowedTools {
		return nil, invalidf(path, "at most %d names", maxAllowedTools)
	}
	for i, n := range names {
		if strings.TrimSpace(n) == "" || utf8.RuneCountInString(n) > maxToolText {
			return nil, invalidf(path+"."+itoa(i), "must be a tool name of 1 to %d characters", maxToolText)
		}
	}
	return names, nil
}

// entries reads the tools array as raw items (nil when it is not one).
func entries(raw json.RawMessage) []map[string]json.RawMessage {
	var items []map[string]json.RawMessage
	json.Unmarshal(raw, &items)
	return items
}

// mcpOf is the mcp entry of a raw item, if it is one.
func mcpOf(item map[string]json.RawMessage) (mcpTool, bool) {
	var t mcpTool
	if _, ok := item["type"]; !ok {
		return t, false
	}
	b, _ := json.Marshal(item)
	return t, json.Unmarshal(b, &t) == nil && t.Type == "mcp"
}

// sealTools is plain (validated tools) as stored: every header value
// sealed; a masked value takes the stored one of the same entry (prev).
func sealTools(box sqldb.Sealer, plain, prev json.RawMessage) (json.RawMessage, error) {
	old := map[string]map[string]string{}
	for _, item := range entries(prev) {
		if t, ok := mcpOf(item); ok {
			old[t.Name] = t.Headers
		}
	}
	items := entries(plain)
	changed := false
	for i, item := range items {
		t, ok := mcpOf(item)
		if !ok || len(t.Headers) == 0 {
			continue
		}
		for k, v := range t.Headers {
			if v == Masked {
				kept, ok := old[t.Name][k]
				if !ok {
					return nil, errs.InvalidField("tools."+itoa(i)+".headers."+k,
						"is masked but this mcp tool has no stored value for it: give the value")
				}
				t.Headers[k] = kept
				continue
			}
			sealed, err := box.Seal(v)
			if err != nil {
				return nil, err
			}
			t.Headers[k] = sealed
		}
		b, _ := json.Marshal(t.Headers)
		item["headers"] = b
		changed = true
	}
	if !changed {
		return plain, nil
	}
	return json.Marshal(items)
}

// MaskTools is a stored tools array as reads show it: header values masked.
func MaskTools(raw json.RawMessage) json.RawMessage {
	items := entries(raw)
	changed := false
	for _, item := range items {
		t, ok := mcpOf(item)
		if !ok || len(t.Headers) == 0 {
			continue
		}
		for k := range t.Headers {
			t.Headers[k] = Masked
		}
		b, _ := json.Marshal(t.Headers)
		item["headers"] = b
		changed = true
	}
	if !changed {
		return raw
	}
	b, err := json.Marshal(items)
	if err != nil {
		return raw
	}
	return b
}

// MCPServer is an agent's mcp entry for the conversation engine, its
// header values opened.
type MCPServer struct {
	Name         string
	URL          string
	Headers      map[string]string
	AllowedTools []string
}

// MCPServers are the agent's mcp entries with their headers opened by box.
// An entry whose header cannot be opened (a lost key) is left out and
// named in bad.
func MCPServers(box sqldb.Sealer, tools json.RawMessage) (out []MCPServer, bad []string) {
	box = sqldb.OrPlainText(box)
	for _, item := range entries(tools) {
		t, ok := mcpOf(item)
		if !ok {
			continue
		}
		h := make(map[string]string, len(t.Headers))
		okAll := true
		for k, v := range t.Headers {
			plain, err := box.Open(v)
			if err != nil {
				okAll = false
				break
			}
			h[k] = plain
		}
		if !okAll {
			bad = append(bad, t.Name)
			continue
		}
		out = append(out, MCPServer{Name: t.Name, URL: t.URL, Headers: h, AllowedTools: t.AllowedTools})
	}
	return out, bad
}
