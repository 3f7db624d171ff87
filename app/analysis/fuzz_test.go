package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fuzzBound is the time one fuzz input may take to parse or validate
// (the inputs are small; a cost bomb takes minutes).
const fuzzBound = time.Second

// bomb is a schema of levels of allOf naming the next level twice.
func bomb(levels int) string {
	var b strings.Builder
	b.WriteString(`{"$defs":{`)
	for i := range levels {
		fmt.Fprintf(&b, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}},"$ref":"#/$defs/d0"}`, levels)
	return b.String()
}

// FuzzValidate: any schema CompileSchema accepts validates any answer
// within the resource bound, whatever its $ref, nesting or keywords.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(bomb(30)), []byte(`"x"`))
	f.Add([]byte(bomb(12)), []byte(`"x"`))
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"array","items":{"$ref":"#/$defs/n"}}},"$defs":{"n":{"type":"integer","maximum":5}}}`),
		[]byte(`{"a":[1,2,3,9]}`))
	f.Add([]byte(`{"pattern":"(a+)+$"}`), []byte(`"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"`))
	f.Add([]byte(`{"items":{"$ref":"#"}}`), []byte(`[[[[]]]]`))
	f.Fuzz(func(t *testing.T, schema, answer []byte) {
		began := time.Now()
		sch, err := CompileSchema(schema)
		if err == nil {
			Validate(context.Background(), sch, answer)
		}
		if d := time.Since(began); d > fuzzBound {
			t.Fatalf("compiling %d bytes of schema and validating %d bytes took %s (bound %s)", len(schema), len(answer), d, fuzzBound)
		}
	})
}

// FuzzParsePlan: any analysisPlan an operator sends is either refused with
// an error or accepted as a plan whose schema compiles again from its own
// JSON; it never panics, and an accepted plan survives a round trip.
func FuzzParsePlan(f *testing.F) {
	for _, s := range []string{
		`{"summary":{"enabled":true}}`,
		`{"structuredData":{"schema":{"type":"object","properties":{"booked":{"type":"boolean"}}}}}`,
		`{"structuredData":{"schema":{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}}}`,
		`{"structuredData":{"schema":{"$ref":"file:///etc/passwd"}}}`,
		`{"structuredData":{"schema":{"$ref":"http://127.0.0.1/x"}}}`,
		`{"structuredData":{"schema":{"pattern":"(a+)+$"}}}`,
		`{"successEvaluation":{"rubric":"numeric_1_10","prompt":"be fair"}}`,
		`{"successEvaluation":{"rubric":"stars"}}`,
		`{"structuredData":{"schema":true}}`,
		`null`, `[]`, `{}`, `{"summary":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"structuredData":{"schema":` + bomb(30) + `}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		began := time.Now()
		p, err := ParsePlan(b)
		if d := time.Since(began); d > fuzzBound {
			t.Fatalf("ParsePlan of %d bytes took %s (bound %s)", len(b), d, fuzzBound)
		}
		if err != nil {
			return
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("accepted plan does not marshal: %v", err)
		}
		if _, err := ParsePlan(again); err != nil {
			t.Fatalf("accepted plan %s refused after a round trip: %v", again, err)
		}
	})
}

// FuzzCheckAnswer: whatever the model answers, checking it against a plan
// gives a result or an error, never a panic, and an accepted answer's
// structuredData validates against the schema.
func FuzzCheckAnswer(f *testing.F) {
	plan, err := ParsePlan([]byte(`{"summary":{"enabled":true},"structuredData":{"schema":{"type":"object","required":["n"],"properties":{"n":{"type":"integer","maximum":5}}}},"successEvaluation":{"rubric":"numeric_1_10"}}`))
	if err != nil {
		f.Fatal(err)
	}
	sch, _ := CompileSchema(plan.StructuredData.Schema)
	for _, s := range []string{`{"summary":"s","structuredData":{"n":3},"success":7}`, "```json\n{}\n```", `{"success":11}`, `nope`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		res, err := check(context.Background(), plan, s)
		if err != nil {
			return
		}
		if err := Validate(context.Background(), sch, res.StructuredData); err != nil {
			t.Fatalf("accepted structuredData %s does not validate: %v", res.StructuredData, err)
		}
	})
}
