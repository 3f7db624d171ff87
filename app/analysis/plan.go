// Package analysis is post-call analysis (issue 24): an agent's analysis
// plan (summary, structured data against a JSON Schema, success
// evaluation), the durable queue's worker that asks the model once a call
// or a conversation has ended, and the use cases that read and re-run
// analyses. Rules only: no HTTP here (app/api/analysis serves it), SQL in
// storage/analysisstore.
package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentd/agentd/internal/errs"
)

// Limits of a plan.
const (
	MaxSchemaBytes = 32 << 10
	maxPrompt      = 4000 // characters
)

// Rubrics of the success evaluation.
const (
	RubricPassFail    = "pass_fail"
	RubricNumeric     = "numeric_1_10"
	RubricDescriptive = "descriptive"
)

// Plan is an agent's analysisPlan.
type Plan struct {
	Summary           *SummaryPlan    `json:"summary,omitempty"`
	StructuredData    *StructuredPlan `json:"structuredData,omitempty"`
	SuccessEvaluation *SuccessPlan    `json:"successEvaluation,omitempty"`
}

// SummaryPlan asks for a summary.
type SummaryPlan struct {
	Enabled bool   `json:"enabled"`
	Prompt  string `json:"prompt,omitempty"`
}

// StructuredPlan asks for data matching Schema.
type StructuredPlan struct {
	Schema json.RawMessage `json:"schema"`
	Prompt string          `json:"prompt,omitempty"`
}

// SuccessPlan asks for a verdict in the rubric.
type SuccessPlan struct {
	Rubric string `json:"rubric"`
	Prompt string `json:"prompt,omitempty"`
}

func invalid(field, msg string) error {
	e := errs.New(errs.Invalid, msg)
	e.Field = field
	return e
}

// ParsePlan decodes and checks a plan as an agent's save gives it: known
// fields only, a schema that compiles as draft 2020-12 within 32 KB, a
// known rubric. The error names the field.
func ParsePlan(b []byte) (Plan, error) {
	var p Plan
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, invalid("analysisPlan", "analysisPlan must be an object {summary, structuredData, successEvaluation}: "+err.Error())
	}
	if dec.More() {
		return p, invalid("analysisPlan", "analysisPlan must be one JSON object")
	}
	if p.Summary == nil && p.StructuredData == nil && p.SuccessEvaluation == nil {
		return p, invalid("analysisPlan", "analysisPlan asks for nothing: give summary, structuredData or successEvaluation")
	}
	for field, s := range map[string]*string{"summary.prompt": promptOf(p.Summary), "structuredData.prompt": structPrompt(p.StructuredData),
		"successEvaluation.prompt": successPrompt(p.SuccessEvaluation)} {
		if s != nil && utf8.RuneCountInString(*s) > maxPrompt {
			return p, invalid("analysisPlan."+field, fmt.Sprintf("analysisPlan.%s is too long (max %d characters)", field, maxPrompt))
		}
	}
	if p.StructuredData != nil {
		if _, err := CompileSchema(p.StructuredData.Schema); err != nil {
			return p, err
		}
	}
	if p.SuccessEvaluation != nil {
		switch p.SuccessEvaluation.Rubric {
		case RubricPassFail, RubricNumeric, RubricDescriptive:
		default:
			return p, invalid("analysisPlan.successEvaluation.rubric", "analysisPlan.successEvaluation.rubric must be pass_fail, numeric_1_10 or descriptive")
		}
	}
	return p, nil
}

func promptOf(s *SummaryPlan) *string {
	if s == nil {
		return nil
	}
	return &s.Prompt
}

func structPrompt(s *StructuredPlan) *string {
	if s == nil {
		return nil
	}
	return &s.Prompt
}

func successPrompt(s *SuccessPlan) *string {
	if s == nil {
		return nil
	}
	return &s.Prompt
}

// noLoader refuses every external reference: a schema is one document, and
// an operator's $ref must never make the server read a file or a URL.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not allowed: the schema must be self-contained", url)
}

// CompileSchema compiles a structuredData schema (draft 2020-12 unless it
// says otherwise, at most 32 KB, no external references, within the
// bounds of schemacost.go).
func CompileSchema(b json.RawMessage) (*Schema, error) {
	const field = "analysisPlan.structuredData.schema"
	if len(bytes.TrimSpace(b)) == 0 || bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil, invalid(field, field+" is required (a JSON Schema object)")
	}
	if len(b) > MaxSchemaBytes {
		return nil, invalid(field, fmt.Sprintf("%s is %d bytes, max %d", field, len(b), MaxSchemaBytes))
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, invalid(field, field+" is not valid JSON: "+err.Error())
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, invalid(field, field+" must be a JSON Schema object")
	}
	if err := costOf(doc); err != nil { // before compiling: the cost is the expanded size
		return nil, invalid(field, field+" "+err.Error())
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	stop := stoppable(c)
	const loc = "urn:agentd:analysis-schema"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, invalid(field, field+": "+oneLine(err))
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, invalid(field, field+" is not a valid JSON Schema: "+oneLine(err))
	}
	return &Schema{s: sch, stop: stop}, nil
}

// Validate checks raw against sch within ValidateTimeout; the error lists
// every mismatch. An answer beyond MaxStructuredDataBytes is refused
// unread.
func Validate(ctx context.Context, sch *Schema, raw json.RawMessage) error {
	if len(raw) > MaxStructuredDataBytes {
		return fmt.Errorf("structuredData is %d bytes, max %d", len(raw), MaxStructuredDataBytes)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("structuredData is not JSON: %v", err)
	}
	if err := validateWithin(ctx, sch, v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(oneLine(ve))
		}
		return err
	}
	return nil
}

func oneLine(err error) string {
	s := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
	if len(s) > 2000 {
		s = s[:2000] + "…"
	}
	return s
}
