package kb

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/errs"
)

// Each rule refuses with kind Invalid, the field's path and the message
// clients see (the HTTP tests in package app pin the same messages).
func TestValidationFieldPaths(t *testing.T) {
	s := func(v string) *string { return &v }
	n := func(v int) *int { return &v }
	src := SourceInput{CollectionID: "c", ExternalID: s("x"), Title: s("t"), Content: s("c")}
	with := func(f func(*SourceInput)) SourceInput { b := src; f(&b); return b }
	batch := func(items ...string) BatchInput {
		b := BatchInput{CollectionID: "c"}
		for _, it := range items {
			b.Sources = append(b.Sources, json.RawMessage(it))
		}
		return b
	}
	item := `{"externalId":"x","title":"t","content":"c"}`
	cases := []struct {
		name, field, msg string
		err              func() error
	}{
		{"externalId", "externalId", "externalId is required", func() error { _, e := with(func(b *SourceInput) { b.ExternalID = s(" ") }).Validate(); return e }},
		{"externalId long", "externalId", "externalId too long, max 255 characters", func() error {
			_, e := with(func(b *SourceInput) { b.ExternalID = s(strings.Repeat("a", 256)) }).Validate()
			return e
		}},
		{"title", "title", "title too long, max 500 characters", func() error {
			_, e := with(func(b *SourceInput) { b.Title = s(strings.Repeat("a", 501)) }).Validate()
			return e
		}},
		{"content", "content", "content too long, max 500KB", func() error {
			_, e := with(func(b *SourceInput) { b.Content = s(strings.Repeat("a", MaxContentBytes+1)) }).Validate()
			return e
		}},
		{"role", "contentRole", "contentRole must be 1 to 64 characters of a-z, 0-9, _ or -", func() error {
			_, e := with(func(b *SourceInput) { b.ContentRole = s("FAQ!") }).Validate()
			return e
		}},
		{"batch none", "sources", "sources is required", func() error { _, e := batch().Validate(); return e }},
		{"batch title", "sources.1.title", "sources.1.title: title is required", func() error {
			_, e := batch(item, `{"externalId":"y","content":"c"}`).Validate()
			return e
		}},
		{"batch type", "sources.0.externalId", "sources.0.externalId: must be a string", func() error { _, e := batch(`{"externalId":7}`).Validate(); return e }},
		{"batch item", "sources.1", "sources.1: must be an object", func() error { _, e := batch(item, `"x"`).Validate(); return e }},
		{"search limit", "limit", "limit must be between 1 and 50", func() error {
			_, e := SearchInput{CollectionID: "c", Query: s("q"), Limit: n(51)}.Validate()
			return e
		}},
		{"search mode", "mode", "mode must be hybrid, semantic or keyword", func() error {
			_, e := SearchInput{CollectionID: "c", Query: s("q"), Mode: "fuzzy"}.Validate()
			return e
		}},
		{"search metadata", "metadata.a", "metadata.a: filter values must be strings, numbers or booleans", func() error {
			_, e := SearchInput{CollectionID: "c", Query: s("q"), Metadata: map[string]any{"a": []any{1.0}}}.Validate()
			return e
		}},
		{"page limit", "limit", "limit must be an integer between 1 and 100", func() error { _, e := ParsePage("101", ""); return e }},
		{"page offset", "offset", "offset must be a non-negative integer", func() error { _, e := ParsePage("", "-1"); return e }},
	}
	for _, c := range cases {
		var e *errs.Error
		if err := c.err(); !errors.As(err, &e) || e.Kind != errs.Invalid || e.Field != c.field || e.Message != c.msg {
			t.Errorf("%s: %#v, want invalid %s %q", c.name, err, c.field, c.msg)
		}
	}
	if _, e := src.Validate(); e != nil {
		t.Fatalf("valid source refused: %v", e)
	}
	if req, err := (SearchInput{CollectionID: "c", Query: s("q")}).Validate(); err != nil || req.Limit != 5 || req.Mode != ModeHybrid {
		t.Fatalf("search defaults: %+v %v", req, err)
	}
}

// FuzzBatchValidate: any batch body gives either an Invalid *errs.Error
// naming a field or a batch that satisfies every limit; never a panic.
func FuzzBatchValidate(f *testing.F) {
	f.Add([]byte(`{"collectionId":"c","sources":[{"externalId":"a","title":"t","content":"x","metadata":{"k":1},"contentRole":"faq"}]}`))
	f.Add([]byte(`{"collectionId":"c","sources":[{"externalId":"a","title":"t","content":"x"},{"externalId":7}]}`))
	f.Add([]byte(`{"collectionId":"c","sources":[null,"x",[],{}]}`))
	f.Add([]byte(`{"collectionId":1}`))
	f.Add([]byte(`{"sources":{}}`))
	f.Add([]byte("\xff\xfe"))
	f.Add([]byte(`{"collectionId":"c","sources":[{"externalId":"a","title":"t","content":"x","contentRole":"A"}]} trailing`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var in BatchInput
		if json.Unmarshal(body, &in) != nil {
			return // the request decoder of package app refuses it first
		}
		req, err := in.Validate()
		if err != nil {
			var e *errs.Error
			if !errors.As(err, &e) || e.Kind != errs.Invalid || e.Message == "" || e.Field == "" {
				t.Fatalf("error %v is not an Invalid *errs.Error with a field", err)
			}
			return
		}
		if req.CollectionID == "" || len(req.Sources) < 1 || len(req.Sources) > MaxBatch {
			t.Fatalf("accepted batch breaks a limit: %+v", req)
		}
		for _, s := range req.Sources {
			if s.ExternalID == "" || utf8.RuneCountInString(s.ExternalID) > MaxExternalID || s.Title == "" ||
				utf8.RuneCountInString(s.Title) > MaxTitle || s.Content == "" || len(s.Content) > MaxContentBytes ||
				(s.ContentRole != "" && !ValidContentRole(s.ContentRole)) || (s.Metadata != nil && !json.Valid(s.Metadata)) {
				t.Fatalf("accepted source breaks a limit: %+v", s)
			}
		}
	})
}
