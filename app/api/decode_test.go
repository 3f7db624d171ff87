package api

import (
	"encoding/json"
	"github.com/agentd/agentd/app/api/httpx"
	"strings"
	"testing"
)

func TestDecodeRefusals(t *testing.T) {
	type body struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
		Tags  []any  `json:"tags"`
	}
	cases := map[string]string{
		``:                                 "empty",
		`null`:                             "JSON object",
		`[1]`:                              "JSON object",
		`"x"`:                              "JSON object",
		`{"name": "a`:                      "unexpected end",
		`{"name": 1}`:                      "name: must be a string",
		`{"count": "x"}`:                   "count: must be an integer",
		`{"count": 1e999}`:                 "count: must be an integer",
		`{} {}`:                            "after the JSON body",
		"{\"name\": \"\xff\"}":             "UTF-8",
		`{"name": "a\u0000b"}`:             "NUL",
		`{"name": "\ud800"}`:               "surrogates",
		`{"name": "\udc00x"}`:              "surrogates",
		`{"name": "\ud800\u0041"}`:         "surrogates",
		`{"tags": ["ok", "\u0000"]}`:       "NUL",
		strings.Repeat(`{"tags":[`, 11000): "",
	}
	for in, want := range cases {
		var b body
		err := httpx.DecodeBytes([]byte(in), &b)
		if err == nil {
			t.Errorf("%.40q: accepted", in)
			continue
		}
		if e := httpx.ToError(err); httpx.StatusOf(e) != 400 || !strings.Contains(e.Message, want) {
			t.Errorf("%.40q: %d %q, want 400 containing %q", in, httpx.StatusOf(e), e.Message, want)
		}
	}
	for _, ok := range []string{`{"name": "a\\u0000b"}`, `{"name": "\ud83d\ude00 \u00e9\\\\"}`, ` {"count": 3}`} {
		var b body
		if err := httpx.DecodeBytes([]byte(ok), &b); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}

// FuzzDecodeBytes: any body either decodes or is a 4xx, never a panic or
// a 5xx; accepted strings hold no NUL and no replacement of a bad surrogate.
func FuzzDecodeBytes(f *testing.F) {
	for _, s := range []string{`{"name":"x","count":1,"meta":{"a":[1,2]}}`, `{"name":"\u0000"}`, `{"name":"\ud800"}`, `null`, `{`, `{"count":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var b struct {
			Name  string         `json:"name"`
			Count int            `json:"count"`
			Meta  map[string]any `json:"meta"`
		}
		err := httpx.DecodeBytes(in, &b)
		if err != nil {
			if e := httpx.ToError(err); httpx.StatusOf(e) < 400 || httpx.StatusOf(e) >= 500 {
				t.Fatalf("status %d for %q", httpx.StatusOf(e), in)
			}
			return
		}
		if strings.ContainsRune(b.Name, 0) {
			t.Fatalf("NUL accepted in %q", in)
		}
		if !json.Valid(in) {
			t.Fatalf("invalid JSON accepted: %q", in)
		}
	})
}
