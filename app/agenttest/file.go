// Package agenttest runs scripted test conversations against an agent
// (issue 24): a file of scenarios, each a list of user turns with
// expectations on every answer (contains, notContains, cites, callsTool,
// judge), run through the conversation engine in chat mode, reported as
// JSON and as JUnit XML for CI. Rules only: no HTTP here.
package agenttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentd/agentd/internal/errs"
)

// Limits of a test file. MaxFileBytes is checked before anything is
// decoded; the YAML bounds (yamlbound.go) before any alias is expanded.
const (
	MaxFileBytes = 1 << 20
	maxScenarios = 100
	maxTurns     = 50
	maxText      = 32000
)

// Suite is a test file.
type Suite struct {
	Scenarios []Scenario `json:"scenarios"`
}

// Scenario is one test conversation.
type Scenario struct {
	Name  string `json:"name"`
	Turns []Turn `json:"turns"`
}

// Turn is a user message and what its answer must show.
type Turn struct {
	User   string `json:"user"`
	Expect Expect `json:"expect"`
}

// Expect are the checks of one answer; every one given must hold.
type Expect struct {
	Contains    []string  `json:"contains,omitempty"`    // case-insensitive
	NotContains []string  `json:"notContains,omitempty"` // case-insensitive
	Cites       []string  `json:"cites,omitempty"`       // source externalIds
	CallsTool   *ToolCall `json:"callsTool,omitempty"`
	Judge       string    `json:"judge,omitempty"` // a yes/no question for the model
}

// ToolCall expects a call of Name whose arguments include Arguments.
type ToolCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

func invalid(field, msg string) error { return errs.InvalidField(field, msg) }

// Parse reads a test file in YAML or JSON (JSON is YAML): unknown fields,
// empty scenarios and empty turns are refused with the path that is wrong.
func Parse(b []byte) (Suite, error) {
	var s Suite
	if len(b) > MaxFileBytes {
		return s, invalid("file", fmt.Sprintf("the test file is %d bytes, max %d", len(b), MaxFileBytes))
	}
	// Into nodes first: aliases stay references, so their expansion is
	// measured before anything is expanded.
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return s, invalid("file", "the test file is not YAML or JSON: "+oneLine(err.Error()))
	}
	if err := checkAliases(&root); err != nil {
		return s, err
	}
	var doc any
	if err := root.Decode(&doc); err != nil {
		return s, invalid("file", "the test file is not YAML or JSON: "+oneLine(err.Error()))
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return s, invalid("file", "the test file must use string keys: "+oneLine(err.Error()))
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, invalid("file", "the test file must be {scenarios: [{name, turns: [{user, expect}]}]}: "+oneLine(err.Error()))
	}
	if len(s.Scenarios) == 0 {
		return s, invalid("scenarios", "give at least one scenario")
	}
	if len(s.Scenarios) > maxScenarios {
		return s, invalid("scenarios", fmt.Sprintf("at most %d scenarios", maxScenarios))
	}
	for i, sc := range s.Scenarios {
		p := fmt.Sprintf("scenarios[%d]", i)
		if strings.TrimSpace(sc.Name) == "" {
			return s, invalid(p+".name", "required")
		}
		if len(sc.Turns) == 0 || len(sc.Turns) > maxTurns {
			return s, invalid(p+".turns", fmt.Sprintf("give 1 to %d turns", maxTurns))
		}
		for k, t := range sc.Turns {
			tp := fmt.Sprintf("%s.turns[%d]", p, k)
			if strings.TrimSpace(t.User) == "" || len([]rune(t.User)) > maxText {
				return s, invalid(tp+".user", fmt.Sprintf("required, at most %d characters", maxText))
			}
			if t.Expect.CallsTool != nil && strings.TrimSpace(t.Expect.CallsTool.Name) == "" {
				return s, invalid(tp+".expect.callsTool.name", "required")
			}
			for _, c := range append(append(append([]string{}, t.Expect.Contains...), t.Expect.NotContains...), t.Expect.Cites...) {
				if c == "" {
					return s, invalid(tp+".expect", "contains, notContains and cites take non-empty strings")
				}
			}
		}
	}
	return s, nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
