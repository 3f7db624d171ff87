package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/storage"
)

// Knowledge source limits (API.md "Limits"; "500KB" is 512,000 bytes).
const (
	kbMaxExternalID   = 255
	kbMaxTitle        = 500
	kbMaxContentBytes = 512_000
	kbMaxBatch        = 50
	kbMaxDelete       = 100
	kbMaxContentRole  = 64
)

// kbSourceBody is one source as the single and batch endpoints take it.
type kbSourceBody struct {
	CollectionID string         `json:"collectionId"`
	ExternalID   *string        `json:"externalId"`
	Title        *string        `json:"title"`
	Content      *string        `json:"content"`
	Metadata     map[string]any `json:"metadata"`
	ContentRole  *string        `json:"contentRole"`
}

// kbFieldErr is a validation failure of one field: the reason alone on the
// single endpoint, "sources.<i>.<field>: <reason>" in a batch.
type kbFieldErr struct{ field, reason string }

// validate checks a source's fields and converts it for storage.
func (b kbSourceBody) validate() (storage.SourceInput, *kbFieldErr) {
	var in storage.SourceInput
	switch {
	case b.ExternalID == nil || strings.TrimSpace(*b.ExternalID) == "":
		return in, &kbFieldErr{"externalId", "externalId is required"}
	case utf8.RuneCountInString(*b.ExternalID) > kbMaxExternalID:
		return in, &kbFieldErr{"externalId", fmt.Sprintf("externalId too long, max %d characters", kbMaxExternalID)}
	case b.Title == nil || strings.TrimSpace(*b.Title) == "":
		return in, &kbFieldErr{"title", "title is required"}
	case utf8.RuneCountInString(*b.Title) > kbMaxTitle:
		return in, &kbFieldErr{"title", fmt.Sprintf("title too long, max %d characters", kbMaxTitle)}
	case b.Content == nil || *b.Content == "":
		return in, &kbFieldErr{"content", "content is required"}
	case len(*b.Content) > kbMaxContentBytes:
		return in, &kbFieldErr{"content", "content too long, max 500KB"}
	}
	if b.ContentRole != nil && !validContentRole(*b.ContentRole) {
		return in, &kbFieldErr{"contentRole", "contentRole must be 1 to 64 characters of a-z, 0-9, _ or -"}
	}
	in = storage.SourceInput{ExternalID: *b.ExternalID, Title: *b.Title, Content: *b.Content}
	if b.ContentRole != nil {
		in.ContentRole = *b.ContentRole
	}
	if b.Metadata != nil {
		m, err := kbMarshal(b.Metadata)
		if err != nil {
			return in, &kbFieldErr{"metadata", "metadata must be a JSON object"}
		}
		in.Metadata = m
	}
	return in, nil
}

// validContentRole is DECISIONS.md's [a-z0-9_-]{1,64}.
func validContentRole(s string) bool {
	if s == "" || len(s) > kbMaxContentRole {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// kbMarshal is JSON with sorted keys and no HTML escaping, so equal
// metadata always stores the same bytes.
func kbMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// kbBatchRequest is a validated batch.
type kbBatchRequest struct {
	CollectionID string
	Sources      []storage.SourceInput
}

// parseKBBatch decodes and validates a batch body all-or-nothing: the first
// invalid field anywhere is a 400 naming its path, sources.<index>.<field>.
func parseKBBatch(body []byte) (kbBatchRequest, error) {
	var raw struct {
		CollectionID string            `json:"collectionId"`
		Sources      []json.RawMessage `json:"sources"`
	}
	if err := decodeBytes(body, &raw); err != nil {
		return kbBatchRequest{}, err
	}
	if raw.CollectionID == "" {
		return kbBatchRequest{}, badRequest("collectionId is required")
	}
	if raw.Sources == nil {
		return kbBatchRequest{}, badRequest("sources is required")
	}
	if len(raw.Sources) < 1 || len(raw.Sources) > kbMaxBatch {
		return kbBatchRequest{}, badRequest(fmt.Sprintf("sources must hold 1 to %d items, got %d", kbMaxBatch, len(raw.Sources)))
	}
	req := kbBatchRequest{CollectionID: raw.CollectionID, Sources: make([]storage.SourceInput, len(raw.Sources))}
	for i, item := range raw.Sources {
		prefix := fmt.Sprintf("sources.%d", i)
		if t := bytes.TrimSpace(item); len(t) == 0 || t[0] != '{' {
			return kbBatchRequest{}, badRequest(prefix + ": must be an object")
		}
		var sb kbSourceBody
		if err := json.Unmarshal(item, &sb); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				return kbBatchRequest{}, badRequest(fmt.Sprintf("%s.%s: must be %s", prefix, te.Field, jsonKind(te.Type.Kind().String())))
			}
			return kbBatchRequest{}, badRequest(prefix + ": must be an object")
		}
		in, fe := sb.validate()
		if fe != nil {
			return kbBatchRequest{}, badRequest(prefix + "." + fe.field + ": " + fe.reason)
		}
		req.Sources[i] = in
	}
	return req, nil
}
