package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/agentd/agentd/app/conversations"
	"github.com/agentd/agentd/app/llm"
)

// Engine is the conversation engine (app/conversations) the scenarios run
// through, in chat mode.
type Engine interface {
	Start(ctx context.Context, orgID, channel string, in conversations.StartInput) (conversations.View, error)
	Send(ctx context.Context, orgID, convID, content string, onDelta func(string)) (conversations.Message, error)
	End(ctx context.Context, orgID, id string) (conversations.View, error)
}

// Runner runs test files.
type Runner struct {
	Engine Engine
	Judge  llm.Model // nil (--llm builtin): judge expectations are skipped, saying why
}

// Report is a run's outcome.
type Report struct {
	AgentID   string           `json:"agentId"`
	Passed    int              `json:"passed"`
	Failed    int              `json:"failed"`
	Scenarios []ScenarioReport `json:"scenarios"`
}

// ScenarioReport is one scenario's outcome.
type ScenarioReport struct {
	Name           string       `json:"name"`
	Passed         bool         `json:"passed"`
	ConversationID string       `json:"conversationId,omitempty"`
	DurationMS     int64        `json:"durationMs"`
	Error          string       `json:"error,omitempty"`
	Turns          []TurnReport `json:"turns"`
}

// TurnReport is one answer and the checks it failed or skipped.
type TurnReport struct {
	User     string   `json:"user"`
	Answer   string   `json:"answer"`
	Failures []string `json:"failures"`
	Skipped  []string `json:"skipped,omitempty"`
}

// Run runs every scenario of the suite against the organization's agent,
// each in a conversation of its own (ended afterwards). An error only when
// the agent cannot be talked to at all (not found, inactive).
func (r Runner) Run(ctx context.Context, orgID, agentID string, s Suite) (Report, error) {
	rep := Report{AgentID: agentID, Scenarios: []ScenarioReport{}}
	for i, sc := range s.Scenarios {
		sr, err := r.scenario(ctx, orgID, agentID, sc)
		if err != nil && i == 0 {
			return Report{}, err // the agent cannot be talked to
		}
		if err != nil {
			sr.Error, sr.Passed = "the conversation did not start: "+err.Error(), false
		}
		if sr.Passed {
			rep.Passed++
		} else {
			rep.Failed++
		}
		rep.Scenarios = append(rep.Scenarios, sr)
	}
	return rep, nil
}

func (r Runner) scenario(ctx context.Context, orgID, agentID string, sc Scenario) (ScenarioReport, error) {
	began := time.Now()
	sr := ScenarioReport{Name: sc.Name, Turns: []TurnReport{}}
	meta, _ := json.Marshal(map[string]string{"agentTest": sc.Name})
	conv, err := r.Engine.Start(ctx, orgID, "api", conversations.StartInput{AgentID: agentID, Metadata: meta})
	if err != nil {
		return sr, err
	}
	sr.ConversationID = conv.ID
	defer r.Engine.End(context.WithoutCancel(ctx), orgID, conv.ID)
	var transcript strings.Builder
	sr.Passed = true
	for _, t := range sc.Turns {
		tr := TurnReport{User: t.User, Failures: []string{}}
		msg, err := r.Engine.Send(ctx, orgID, conv.ID, t.User, nil)
		if err != nil {
			sr.Error, sr.Passed = "the agent did not answer: "+err.Error(), false
			break
		}
		tr.Answer = msg.Content
		fmt.Fprintf(&transcript, "user: %s\nassistant: %s\n", t.User, msg.Content)
		tr.Failures, tr.Skipped = r.check(ctx, t.Expect, msg, transcript.String())
		if len(tr.Failures) > 0 {
			sr.Passed = false
		}
		sr.Turns = append(sr.Turns, tr)
	}
	sr.DurationMS = time.Since(began).Milliseconds()
	return sr, nil
}

// check applies the expectations to one answer.
func (r Runner) check(ctx context.Context, e Expect, m conversations.Message, transcript string) (fails, skipped []string) {
	fails = []string{}
	low := strings.ToLower(m.Content)
	for _, c := range e.Contains {
		if !strings.Contains(low, strings.ToLower(c)) {
			fails = append(fails, fmt.Sprintf("contains %q: not in the answer", c))
		}
	}
	for _, c := range e.NotContains {
		if strings.Contains(low, strings.ToLower(c)) {
			fails = append(fails, fmt.Sprintf("notContains %q: the answer has it", c))
		}
	}
	for _, c := range e.Cites {
		found := false
		for _, ci := range m.Citations {
			found = found || ci.ExternalID == c
		}
		if !found {
			fails = append(fails, fmt.Sprintf("cites %q: not among the answer's citations", c))
		}
	}
	if tc := e.CallsTool; tc != nil {
		if !calledTool(m.ToolCalls, *tc) {
			fails = append(fails, fmt.Sprintf("callsTool %q: not called with those arguments", tc.Name))
		}
	}
	if e.Judge != "" {
		if r.Judge == nil {
			skipped = append(skipped, "judge: needs a generative model (--llm openai); builtin cannot judge")
		} else if ok, why, err := r.judge(ctx, e.Judge, transcript); err != nil {
			fails = append(fails, "judge: the model failed: "+err.Error())
		} else if !ok {
			fails = append(fails, fmt.Sprintf("judge %q: no (%s)", e.Judge, why))
		}
	}
	return fails, skipped
}

// calledTool: a call of the tool whose arguments include every expected one.
func calledTool(calls []conversations.ToolCall, want ToolCall) bool {
	for _, c := range calls {
		if c.Name != want.Name {
			continue
		}
		var args map[string]any
		json.Unmarshal([]byte(c.Arguments), &args)
		ok := true
		for k, v := range want.Arguments {
			wj, _ := json.Marshal(v)
			gj, _ := json.Marshal(args[k])
			var wv, gv any
			json.Unmarshal(wj, &wv)
			json.Unmarshal(gj, &gv)
			ok = ok && reflect.DeepEqual(wv, gv)
		}
		if ok {
			return true
		}
	}
	return false
}

// judge asks the model a yes/no question about the conversation so far.
func (r Runner) judge(ctx context.Context, question, transcript string) (bool, string, error) {
	resp, err := r.Judge.Chat(ctx, llm.Request{Messages: []llm.Message{
		{Role: "system", Content: `You judge a test conversation of an AI agent. Answer with one JSON object only: {"pass": true or false, "reason": "one sentence"}.`},
		{Role: "user", Content: "Conversation:\n" + transcript + "\nQuestion: " + question},
	}}, nil)
	if err != nil {
		return false, "", err
	}
	body := strings.TrimSpace(resp.Content)
	body = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(body, "```json"), "```"), "```")
	var v struct {
		Pass   *bool  `json:"pass"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &v); err != nil || v.Pass == nil {
		return false, "", fmt.Errorf("the judge's answer is not {pass, reason}: %q", oneLine(resp.Content))
	}
	return *v.Pass, v.Reason, nil
}
