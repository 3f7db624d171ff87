package calls

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/errs"
)

// FuzzCallResult feeds arbitrary bodies to the result's validation: every
// refusal is invalid input, and whatever is accepted is within the limits
// and stores as valid JSON.
func FuzzCallResult(f *testing.F) {
	for _, s := range []string{
		`{"summary":"ok","outcome":"booked","transcript":[{"role":"agent","text":"hi","at":"2026-06-10T14:00:00Z"}],"metadata":{"a":1}}`,
		`{"transcript":[{"role":"user","text":"","at":"2026-06-10T14:00:00.123456789+05:30"}]}`,
		`{"outcome":"a-b_c9"}`, `{"metadata":{"x":{"y":null}}}`, `{"summary":"\u200b"}`, `{}`, `null`, `[]`,
		`{"transcript":null,"summary":null}`, `{"transcript":[null]}`, `{"outcome":"UP"}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req ResultRequest
		if json.Unmarshal(body, &req) != nil {
			return // the HTTP layer's decoder refuses it (tested in app)
		}
		r, err := parseResult(req, "id")
		if err != nil {
			var e *errs.Error
			if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Message == "" {
				t.Fatalf("body %q: error %v is not invalid input", body, err)
			}
			return
		}
		if r.Summary != nil && (*r.Summary == "" || utf8.RuneCountInString(*r.Summary) > resultMaxSummary) {
			t.Fatalf("summary accepted: %q", *r.Summary)
		}
		if r.Outcome != nil && !outcomeRE.MatchString(*r.Outcome) {
			t.Fatalf("outcome accepted: %q", *r.Outcome)
		}
		if r.Transcript != nil {
			var items []TranscriptItem
			if json.Unmarshal(r.Transcript, &items) != nil || len(items) > resultMaxTranscript {
				t.Fatalf("transcript stored as %s", r.Transcript)
			}
		}
		if r.Metadata != nil {
			var m map[string]any
			if json.Unmarshal(r.Metadata, &m) != nil || m == nil {
				t.Fatalf("metadata stored as %s", r.Metadata)
			}
		}
		if r.Summary == nil && r.Outcome == nil && r.Transcript == nil && r.Metadata == nil {
			t.Fatal("an empty result was accepted")
		}
	})
}
