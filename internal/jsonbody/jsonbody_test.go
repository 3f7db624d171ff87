package jsonbody

import (
	"errors"
	"testing"

	"github.com/agentd/agentd/internal/errs"
)

// A use case tells "not an object" apart by ErrNotObject, and only then.
func TestNotObject(t *testing.T) {
	var dst struct {
		Name string `json:"name"`
	}
	for in, want := range map[string]bool{
		`null`: true, `[1]`: true, `"x"`: true, `5`: true,
		`{"name": 1}`: false, `{"name": "a`: false, ``: false, `{} {}`: false,
	} {
		err := Decode([]byte(in), &dst)
		if err == nil {
			t.Fatalf("%q accepted", in)
		}
		if !errs.Is(err, errs.Invalid) {
			t.Errorf("%q: kind %v, want invalid", in, errs.KindOf(err))
		}
		if got := errors.Is(err, ErrNotObject); got != want {
			t.Errorf("%q: ErrNotObject %v, want %v", in, got, want)
		}
	}
	if err := Decode([]byte(`{"name": "a", "other": 1}`), &dst); err != nil || dst.Name != "a" {
		t.Fatalf("valid object: %v %q", err, dst.Name)
	}
}
