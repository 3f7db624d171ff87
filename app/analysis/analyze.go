package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentd/agentd/app/llm"
)

// Result is what an analysis found; the row's status says whether it is
// complete.
type Result struct {
	Summary        *string         `json:"summary"`
	StructuredData json.RawMessage `json:"structuredData"`
	Success        any             `json:"success"` // bool, 1-10 or text by rubric; null when not asked
	Model          string          `json:"model,omitempty"`
	Error          string          `json:"error,omitempty"`
}

// Turn is one line of the transcript given to the model.
type Turn struct {
	Role string
	Text string
}

// errInvalid is an answer that does not match the plan: asked once more
// with the errors, then the analysis fails with them.
type errInvalid struct{ msg string }

func (e errInvalid) Error() string { return e.msg }

// analyze asks the model for the plan's parts over the transcript (text,
// already fitted to the context). An outage (429, 5xx, timeout, no
// connection) is returned as is: the worker retries later. A refusal (any
// other 4xx: context too long, bad key, unknown model) and an answer that
// does not validate twice give a failed Result that says why.
func analyze(ctx context.Context, m llm.Model, p Plan, transcript string) (Result, bool, error) {
	msgs := []llm.Message{{Role: "system", Content: instructions(p)}, {Role: "user", Content: transcript}}
	for attempt := 0; ; attempt++ {
		resp, err := m.Chat(ctx, llm.Request{Messages: msgs}, nil)
		if err != nil {
			if st := refusal(err); st != nil {
				return Result{Model: m.Name(), Error: fmt.Sprintf("the model service %s refused the analysis with status %d: %s",
					m.Name(), st.Status, oneLine(errors.New(st.Body)))}, false, nil
			}
			return Result{}, false, err
		}
		res, err := check(ctx, p, resp.Content)
		res.Model = m.Name()
		if err == nil {
			return res, true, nil
		}
		var bad errInvalid
		if !errors.As(err, &bad) {
			if ctx.Err() != nil {
				return Result{}, false, err
			}
			return Result{Model: m.Name(), Error: err.Error()}, false, nil
		}
		if attempt == 1 {
			return Result{Model: m.Name(), Error: "the model's answer did not validate twice: " + bad.msg}, false, nil
		}
		msgs = append(msgs, llm.Message{Role: "assistant", Content: resp.Content},
			llm.Message{Role: "user", Content: "Your answer does not validate: " + bad.msg + "\nAnswer again with one JSON object only, fixing these errors."})
	}
}

// refusal is the model service's status when it refused the request for
// good (a 4xx other than 408 and 429): asking again gives the same answer.
func refusal(err error) *llm.StatusError {
	var st *llm.StatusError
	if !errors.As(err, &st) || st.Status < 400 || st.Status >= 500 || st.Status == 408 || st.Status == 429 {
		return nil
	}
	return st
}

// instructions tells the model the one JSON object to answer.
func instructions(p Plan) string {
	var b strings.Builder
	b.WriteString("You analyse a finished conversation between an AI agent and a person. Answer with one JSON object only, no prose, with these keys:\n")
	if p.Summary != nil && p.Summary.Enabled {
		b.WriteString(`- "summary": a short summary of the conversation (string).`)
		if p.Summary.Prompt != "" {
			b.WriteString(" " + p.Summary.Prompt)
		}
		b.WriteString("\n")
	}
	if p.StructuredData != nil {
		b.WriteString(`- "structuredData": an object that validates against this JSON Schema: ` + string(p.StructuredData.Schema) + ".")
		if p.StructuredData.Prompt != "" {
			b.WriteString(" " + p.StructuredData.Prompt)
		}
		b.WriteString("\n")
	}
	if p.SuccessEvaluation != nil {
		switch p.SuccessEvaluation.Rubric {
		case RubricPassFail:
			b.WriteString(`- "success": true when the agent achieved the conversation's goal, false otherwise (boolean).`)
		case RubricNumeric:
			b.WriteString(`- "success": how well the agent achieved its goal, an integer from 1 (not at all) to 10 (perfectly).`)
		default:
			b.WriteString(`- "success": a short assessment of how well the agent achieved its goal (string).`)
		}
		if p.SuccessEvaluation.Prompt != "" {
			b.WriteString(" " + p.SuccessEvaluation.Prompt)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// check parses the model's answer and validates each part the plan asked
// for; errInvalid lists what does not match.
func check(ctx context.Context, p Plan, content string) (Result, error) {
	var res Result
	body := strings.TrimSpace(content)
	body = strings.TrimPrefix(body, "```json")
	body = strings.TrimPrefix(body, "```")
	body = strings.TrimSuffix(strings.TrimSpace(body), "```")
	var out map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return res, errInvalid{"the answer is not a JSON object: " + err.Error()}
	}
	var problems []string
	if p.Summary != nil && p.Summary.Enabled {
		var s string
		if err := json.Unmarshal(out["summary"], &s); err != nil || strings.TrimSpace(s) == "" {
			problems = append(problems, `"summary" must be a non-empty string`)
		} else {
			res.Summary = &s
		}
	}
	if p.StructuredData != nil {
		sch, err := CompileSchema(p.StructuredData.Schema)
		if err != nil {
			return res, err // the plan was checked when saved: not the model's fault
		}
		raw := out["structuredData"]
		if len(raw) == 0 {
			problems = append(problems, `"structuredData" is missing`)
		} else if err := Validate(ctx, sch, raw); errors.Is(err, errValidateTimeout) || ctx.Err() != nil {
			return res, err // the schema's cost, not the model's answer
		} else if err != nil {
			problems = append(problems, "structuredData: "+err.Error())
		} else {
			var c bytes.Buffer
			if json.Compact(&c, raw) == nil {
				res.StructuredData = c.Bytes()
			}
		}
	}
	if p.SuccessEvaluation != nil {
		raw := out["success"]
		switch p.SuccessEvaluation.Rubric {
		case RubricPassFail:
			var v bool
			if json.Unmarshal(raw, &v) != nil {
				problems = append(problems, `"success" must be true or false`)
			} else {
				res.Success = v
			}
		case RubricNumeric:
			var v int
			if json.Unmarshal(raw, &v) != nil || v < 1 || v > 10 {
				problems = append(problems, `"success" must be an integer from 1 to 10`)
			} else {
				res.Success = v
			}
		default:
			var v string
			if json.Unmarshal(raw, &v) != nil || strings.TrimSpace(v) == "" {
				problems = append(problems, `"success" must be a non-empty string`)
			} else {
				res.Success = v
			}
		}
	}
	if len(problems) > 0 {
		return res, errInvalid{strings.Join(problems, "; ")}
	}
	return res, nil
}
