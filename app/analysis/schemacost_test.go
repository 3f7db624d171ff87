package analysis

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testkit"
)

// costly is a schema within every bound (32 KB, 10,000 expanded nodes)
// whose validation of a 16 KB array still costs millions of evaluations:
// each item is checked against 60 × 50 subschemas.
func costly() string {
	refs := func(to string, n int) string {
		return strings.TrimSuffix(strings.Repeat(`{"$ref":"#/$defs/`+to+`"},`, n), ",")
	}
	return `{"$defs":{"i":{"type":"integer"},"a":{"allOf":[` + refs("i", 50) + `]}},"type":"array","items":{"allOf":[` + refs("a", 60) + `]}}`
}

// A costly schema that passes the bounds is stopped at ValidateTimeout:
// Validate returns then, and the validation itself ends (no goroutine
// left burning the CPU).
func TestValidateStopsAtDeadline(t *testing.T) {
	sch, err := CompileSchema([]byte(costly()))
	if err != nil {
		t.Fatalf("costly schema refused: %v", err)
	}
	answer := "[" + strings.TrimSuffix(strings.Repeat("0,", MaxStructuredDataBytes/2-1), ",") + "]"
	before := runtime.NumGoroutine()
	began := time.Now()
	err = Validate(context.Background(), sch, []byte(answer))
	took := time.Since(began)
	if took > ValidateTimeout+time.Second {
		t.Fatalf("validation returned after %s (bound %s): %v", took, ValidateTimeout, err)
	}
	if err == nil {
		t.Skipf("this machine validated %d bytes in %s: the schema is not costly enough to show the deadline", len(answer), took)
	}
	if err != errValidateTimeout {
		t.Fatalf("costly validation: %v", err)
	}
	testkit.Within(time.Second, func() bool { return runtime.NumGoroutine() <= before })
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left after a stopped validation (%d before)", n, before)
	}
	// Stopping it through the context works the same way.
	sch, _ = CompileSchema([]byte(costly()))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := Validate(ctx, sch, []byte(answer)); err != context.DeadlineExceeded {
		t.Errorf("cancelled validation: %v", err)
	}
}

// uniqueItems over the largest answer (its pairs, work no deadline can cut)
// stays well under the deadline.
func TestUniqueItemsBounded(t *testing.T) {
	sch, err := CompileSchema([]byte(`{"type":"array","uniqueItems":true}`))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("[")
	for i := 0; b.Len() < MaxStructuredDataBytes-8; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprint(&b, i%10000)
	}
	b.WriteString("]")
	began := time.Now()
	Validate(context.Background(), sch, []byte(b.String()))
	if d := time.Since(began); d > ValidateTimeout/2 {
		t.Fatalf("uniqueItems over %d bytes took %s", b.Len(), d)
	}
	t.Logf("uniqueItems over %d bytes: %s", b.Len(), time.Since(began))
}
