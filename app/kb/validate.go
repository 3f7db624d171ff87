package kb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/jsonbody"
	"github.com/agentd/agentd/storage/kbstore"
)

// Knowledge source limits (API.md "Limits"; "500KB" is 512,000 bytes).
const (
	MaxExternalID   = 255
	MaxTitle        = 500
	MaxContentBytes = 512_000
	MaxBatch        = 50
	MaxDelete       = 100
	MaxContentRole  = 64
)

// invalid is bad input in one field whose message already names it.
func invalid(field, msg string) *errs.Error {
	return &errs.Error{Kind: errs.Invalid, Field: field, Message: msg}
}

// SourceInput is one source as the single and batch endpoints take it.
// Pointers tell a missing field from an empty one.
type SourceInput struct {
	CollectionID string         `json:"collectionId"`
	ExternalID   *string        `json:"externalId"`
	Title        *string        `json:"title"`
	Content      *string        `json:"content"`
	Metadata     map[string]any `json:"metadata"`
	ContentRole  *string        `json:"contentRole"`
}

// Validate checks a source's fields and converts it for storage. The error
// names the field; its message is the reason alone, as the single endpoint
// shows it (a batch prefixes the item's path).
func (b SourceInput) Validate() (kbstore.SourceInput, *errs.Error) {
	var in kbstore.SourceInput
	switch {
	case b.ExternalID == nil || strings.TrimSpace(*b.ExternalID) == "":
		return in, invalid("externalId", "externalId is required")
	case utf8.RuneCountInString(*b.ExternalID) > MaxExternalID:
		return in, invalid("externalId", fmt.Sprintf("externalId too long, max %d characters", MaxExternalID))
	case b.Title == nil || strings.TrimSpace(*b.Title) == "":
		return in, invalid("title", "title is required")
	case utf8.RuneCountInString(*b.Title) > MaxTitle:
		return in, invalid("title", fmt.Sprintf("title too long, max %d characters", MaxTitle))
	case b.Content == nil || *b.Content == "":
		return in, invalid("content", "content is required")
	case len(*b.Content) > MaxContentBytes:
		return in, invalid("content", "content too long, max 500KB")
	}
	if b.ContentRole != nil && !ValidContentRole(*b.ContentRole) {
		return in, invalid("contentRole", "contentRole must be 1 to 64 characters of a-z, 0-9, _ or -")
	}
	in = kbstore.SourceInput{ExternalID: *b.ExternalID, Title: *b.Title, Content: *b.Content}
	if b.ContentRole != nil {
		in.ContentRole = *b.ContentRole
	}
	if b.Metadata != nil {
		m, err := marshal(b.Metadata)
		if err != nil {
			return in, invalid("metadata", "metadata must be a JSON object")
		}
		in.Metadata = m
	}
	return in, nil
}

// ValidContentRole is DECISIONS.md's [a-z0-9_-]{1,64}.
func ValidContentRole(s string) bool {
	if s == "" || len(s) > MaxContentRole {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// marshal is JSON with sorted keys and no HTML escaping, so equal metadata
// always stores the same bytes.
func marshal(v any) ([]byte, error) { return jsonbody.Encode(v) }

// BatchInput is the body of a batch upsert with its items still raw, so a
// wrongly typed field is reported with the item's index.
type BatchInput struct {
	CollectionID string            `json:"collectionId"`
	Sources      []json.RawMessage `json:"sources"`
}

// Batch is a validated batch.
type Batch struct {
	CollectionID string
	Sources      []kbstore.SourceInput
}

// Validate checks a batch all-or-nothing: the first invalid field anywhere
// is an error naming its path, sources.<index>.<field>.
func (b BatchInput) Validate() (Batch, error) {
	if b.CollectionID == "" {
		return Batch{}, invalid("collectionId", "collectionId is required")
	}
	if b.Sources == nil {
		return Batch{}, invalid("sources", "sources is required")
	}
	if len(b.Sources) < 1 || len(b.Sources) > MaxBatch {
		return Batch{}, invalid("sources", fmt.Sprintf("sources must hold 1 to %d items, got %d", MaxBatch, len(b.Sources)))
	}
	out := Batch{CollectionID: b.CollectionID, Sources: make([]kbstore.SourceInput, len(b.Sources))}
	for i, item := range b.Sources {
		prefix := fmt.Sprintf("sources.%d", i)
		if t := bytes.TrimSpace(item); len(t) == 0 || t[0] != '{' {
			return Batch{}, errs.InvalidField(prefix, "must be an object")
		}
		var sb SourceInput
		if err := json.Unmarshal(item, &sb); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				return Batch{}, errs.InvalidField(prefix+"."+te.Field, "must be "+errs.JSONKind(te.Type.Kind().String()))
			}
			return Batch{}, errs.InvalidField(prefix, "must be an object")
		}
		in, fe := sb.Validate()
		if fe != nil {
			return Batch{}, errs.InvalidField(prefix+"."+fe.Field, fe.Message)
		}
		out.Sources[i] = in
	}
	return out, nil
}
