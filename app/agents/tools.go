package agents

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tool is one tool an agent may call.
type tool struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// validateTools checks the tools array: objects with string id, name and
// description only; id and name non-empty, ids unique.
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
	tools := make([]tool, 0, len(items))
	seen := map[string]bool{}
	for i, item := range items {
		path := "tools." + itoa(i)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(item, &m); err != nil || m == nil {
			return nil, invalidf(path, "must be an object {id, name, description}")
		}
		var t tool
		for k, v := range m {
			var dst *string
			switch k {
			case "id":
				dst = &t.ID
			case "name":
				dst = &t.Name
			case "description":
				dst = &t.Description
			default:
				return nil, invalidf(path+"."+k, "unknown key (a tool has id, name, description)")
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
