package app

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzCallResult feeds arbitrary bodies to the result endpoint's decoding
// and validation: every refusal is a 4xx *Error, and whatever is accepted
// is within the limits and stores as valid JSON.
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
		var req callResultRequest
		err := decodeBytes(body, &req)
		if err == nil {
			r, perr := parseCallResult(req, "id")
			err = perr
			if perr == nil {
				if r.Summary != nil && (*r.Summary == "" || utf8.RuneCountInString(*r.Summary) > callResultMaxSummary) {
					t.Fatalf("summary accepted: %q", *r.Summary)
				}
				if r.Outcome != nil && !callOutcomeRE.MatchString(*r.Outcome) {
					t.Fatalf("outcome accepted: %q", *r.Outcome)
				}
				if r.Transcript != nil {
					var items []CallTranscriptItem
					if json.Unmarshal(r.Transcript, &items) != nil || len(items) > callResultMaxTranscript {
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
			}
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || status(e) < 400 || status(e) >= 500 || e.Message == "" {
				t.Fatalf("body %q: error %v is not a 4xx *Error", body, err)
			}
		}
	})
}
