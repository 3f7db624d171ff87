package listings

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agentd/agentd/storage/listingstore"
)

// Attribute equality (a README decision): keys and values compare without
// regard to case; a number matches its decimal text whatever the notation
// (3, 3.0 and "3" are equal); a boolean matches "true"/"false"; an array
// matches when any element does.

// normAttrKey is the indexed form of an attribute key.
func normAttrKey(k string) string { return strings.ToLower(strings.TrimSpace(k)) }

// normNumber is the canonical text of a number, or "" when s is not one.
func normNumber(s string) string {
	if s == "" || !(s[0] == '-' || s[0] == '+' || s[0] == '.' || (s[0] >= '0' && s[0] <= '9')) {
		return ""
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return ""
	}
	if f == 0 {
		f = 0 // -0 is 0
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// attrTextForms are the indexed forms of one query or string value: its
// lower-cased text and, when it reads as a number, the number's canonical text.
func attrTextForms(s string) []string {
	t := strings.ToLower(strings.TrimSpace(s))
	if n := normNumber(t); n != "" && n != t {
		return []string{t, n}
	}
	return []string{t}
}

// listingTerms are the attribute index rows of a canonical attributes object.
func listingTerms(attrs json.RawMessage) []listingstore.AttrTerm {
	m := decodeAttrs(attrs)
	var out []listingstore.AttrTerm
	seen := map[listingstore.AttrTerm]bool{}
	addVal := func(key string, v any) {
		var forms []string
		switch x := v.(type) {
		case string:
			forms = attrTextForms(x)
		case json.Number:
			if n := normNumber(x.String()); n != "" {
				forms = []string{n}
			}
		case bool:
			forms = []string{strconv.FormatBool(x)}
		}
		for _, f := range forms {
			t := listingstore.AttrTerm{Key: key, Value: f}
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	for k, v := range m {
		key := normAttrKey(k)
		if arr, ok := v.([]any); ok {
			for _, e := range arr {
				addVal(key, e)
			}
			continue
		}
		addVal(key, v)
	}
	return out
}

// decodeAttrs decodes a stored (already validated) attributes object.
func decodeAttrs(attrs json.RawMessage) map[string]any {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(attrs))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return map[string]any{}
	}
	return m
}

// attrLines renders the attributes as "key: value" lines, keys sorted, for
// the embedded text and the keyword index.
func attrLines(attrs json.RawMessage) []string {
	m := decodeAttrs(attrs)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		lines = append(lines, k+": "+attrDisplay(m[k]))
	}
	return lines
}

func attrDisplay(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = attrDisplay(e)
		}
		return strings.Join(parts, ", ")
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// embedText is what the embedder sees for a listing: the words a shopper
// would use. Price and URL stay out: they carry no meaning for a vector.
func (in *Input) embedText() string {
	var b strings.Builder
	b.WriteString(in.Title)
	if in.Category != "" {
		b.WriteString("\nCategory: " + in.Category)
	}
	if in.Description != "" {
		b.WriteString("\n" + in.Description)
	}
	for _, l := range attrLines(in.Attributes) {
		b.WriteString("\n" + l)
	}
	return b.String()
}

// contentHash covers every stored field, so an identical re-sync is a no-op.
func (in *Input) contentHash() []byte {
	h := sha256.New()
	price := "none"
	if in.HasPrice {
		price = strconv.FormatInt(in.PriceCents, 10)
	}
	for _, f := range []string{in.ExternalID, in.Title, in.Description, in.Category, price, in.Currency,
		string(in.Attributes), in.SourceURL} {
		fmt.Fprintf(h, "%d:%s", len(f), f)
	}
	return h.Sum(nil)
}

// textHash identifies an embedded text together with the embedder's vector
// space, so a new model re-embeds on the next sync.
func textHash(text, space string) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s%s", len(space), space, text)
	return h.Sum(nil)
}

// listingWrite turns a validated input into the storage write.
func (in *Input) listingWrite() listingstore.ListingWrite {
	return listingstore.ListingWrite{
		Listing: listingstore.Listing{
			ExternalID: in.ExternalID, Title: in.Title, Description: in.Description, Category: in.Category,
			HasPrice: in.HasPrice, PriceCents: in.PriceCents, Currency: in.Currency,
			Attributes: in.Attributes, SourceURL: in.SourceURL,
		},
		Hash:     in.contentHash(),
		Terms:    listingTerms(in.Attributes),
		Keywords: strings.Join(attrLines(in.Attributes), "\n"),
	}
}
