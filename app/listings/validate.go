package listings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/errs"
)

// Field limits of a listing (API.md gives the source limits; listings reuse
// them where they have the same field, the rest are ours, in the README).
const (
	maxExternalID     = 255
	maxListingTitle   = 500
	maxDescription    = 65536
	maxCategory       = 255
	maxSourceURL      = 2048
	maxAttributes     = 100
	maxAttrKey        = 100
	maxAttrString     = 1000
	maxAttrArrayItems = 100
)

// Input is one validated listing, normalised: trimmed ids, upper-case
// currency (default EUR), exact price in hundredths, canonical attributes.
type Input struct {
	ExternalID  string
	Title       string
	Description string
	Category    string
	HasPrice    bool
	PriceCents  int64
	Currency    string
	Attributes  json.RawMessage // canonical JSON object ({} when none)
	SourceURL   string
}

// Parse validates one listing object (the JSON text of one item of
// a sync, a JSON/NDJSON import line or a CSV row turned into JSON). It
// returns every problem found, each with a path relative to the item
// ("price", "attributes.color"); unknown fields are ignored.
func Parse(raw []byte) (Input, []errs.FieldError) {
	var in Input
	var problems []errs.FieldError
	add := func(path, msg string) { problems = append(problems, errs.FieldError{Path: path, Message: msg}) }
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		add("", "must be a JSON object")
		return in, problems
	}
	str := func(name string, required bool, max int) string {
		v, ok := obj[name]
		if !ok || string(v) == "null" {
			if required {
				add(name, "is required")
			}
			return ""
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			add(name, "must be a string")
			return ""
		}
		s = strings.TrimSpace(s)
		switch {
		case required && s == "":
			add(name, "must not be empty")
		case utf8.RuneCountInString(s) > max:
			add(name, fmt.Sprintf("must be at most %d characters", max))
		}
		return s
	}
	in.ExternalID = str("externalId", true, maxExternalID)
	in.Title = str("title", true, maxListingTitle)
	in.Description = str("description", false, maxDescription)
	in.Category = str("category", false, maxCategory)
	if v, ok := obj["price"]; ok && string(v) != "null" {
		var n json.Number
		if err := json.Unmarshal(v, &n); err != nil || !isJSONNumber(v) {
			add("price", "must be a number")
		} else if c, err := parseCents(n.String()); err != nil {
			add("price", err.Error())
		} else {
			in.HasPrice, in.PriceCents = true, c
		}
	}
	in.Currency = "EUR"
	if v, ok := obj["currency"]; ok && string(v) != "null" {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			add("currency", "must be a string")
		} else if s = strings.ToUpper(strings.TrimSpace(s)); !isCurrency(s) {
			add("currency", "must be a three-letter currency code such as EUR")
		} else {
			in.Currency = s
		}
	}
	if u := str("sourceUrl", false, maxSourceURL); u != "" && !hasError(problems, "sourceUrl") {
		if msg := checkSourceURL(u); msg != "" {
			add("sourceUrl", msg)
		} else {
			in.SourceURL = u
		}
	}
	in.Attributes = json.RawMessage("{}")
	if v, ok := obj["attributes"]; ok && string(v) != "null" {
		attrs, aerrs := parseAttributes(v)
		problems = append(problems, aerrs...)
		if len(aerrs) == 0 {
			in.Attributes = attrs
		}
	}
	return in, problems
}

func hasError(problems []errs.FieldError, path string) bool {
	for _, e := range problems {
		if e.Path == path {
			return true
		}
	}
	return false
}

// isJSONNumber reports whether v is a JSON number literal (json.Number
// also accepts a quoted number, which is not a number here).
func isJSONNumber(v json.RawMessage) bool {
	return len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9'))
}

func isCurrency(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// checkSourceURL accepts an absolute http or https URL with a host.
func checkSourceURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "must be an absolute http or https URL"
	}
	return ""
}

// parseAttributes checks the attributes object (values: strings, numbers,
// booleans or arrays of those) and returns it as canonical JSON: keys
// sorted, strings trimmed of nothing, numbers kept as written.
func parseAttributes(v json.RawMessage) (json.RawMessage, []errs.FieldError) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil || m == nil {
		return nil, []errs.FieldError{{Path: "attributes", Message: "must be an object"}}
	}
	var problems []errs.FieldError
	if len(m) > maxAttributes {
		problems = append(problems, errs.FieldError{Path: "attributes", Message: fmt.Sprintf("must have at most %d keys", maxAttributes)})
	}
	out := make(map[string]any, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		path := "attributes." + k
		if strings.TrimSpace(k) == "" || utf8.RuneCountInString(k) > maxAttrKey {
			problems = append(problems, errs.FieldError{Path: path, Message: fmt.Sprintf("key must be 1 to %d characters", maxAttrKey)})
			continue
		}
		val, msg := attrValue(m[k], true)
		if msg != "" {
			problems = append(problems, errs.FieldError{Path: path, Message: msg})
			continue
		}
		out[k] = val
	}
	if len(problems) > 0 {
		return nil, problems
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, []errs.FieldError{{Path: "attributes", Message: "could not be encoded"}}
	}
	return b, nil
}

// attrValue decodes one attribute value: a string, number (kept as its
// text), boolean, or (at the top level) an array of those.
func attrValue(v json.RawMessage, allowArray bool) (any, string) {
	const want = "must be a string, number, boolean or an array of those"
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return nil, want
	}
	switch v[0] {
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, want
		}
		if utf8.RuneCountInString(s) > maxAttrString {
			return nil, fmt.Sprintf("must be at most %d characters", maxAttrString)
		}
		return s, ""
	case 't', 'f':
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return nil, want
		}
		return b, ""
	case '[':
		if !allowArray {
			return nil, want
		}
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return nil, want
		}
		if len(items) > maxAttrArrayItems {
			return nil, fmt.Sprintf("must have at most %d items", maxAttrArrayItems)
		}
		out := make([]any, 0, len(items))
		for _, it := range items {
			x, msg := attrValue(it, false)
			if msg != "" {
				return nil, want
			}
			out = append(out, x)
		}
		return out, ""
	}
	if isJSONNumber(v) {
		var n json.Number
		if err := json.Unmarshal(v, &n); err == nil {
			if _, err := strconv.ParseFloat(n.String(), 64); err == nil {
				return n, ""
			}
		}
	}
	return nil, want
}

// SyncBody is a sync request's body, kept raw so every problem is reported
// with its path.
type SyncBody struct {
	Listings    json.RawMessage `json:"listings"`
	DeleteStale json.RawMessage `json:"deleteStale"`
}

// ParseSync validates a whole sync body: 1 to MaxSync listings, each valid,
// and deleteStale a boolean. Every problem is in the error's Details, with
// the item's index in its path ("listings.3.price"), so nothing is written
// unless the whole request is valid.
func ParseSync(body SyncBody) ([]Input, bool, error) {
	var details []errs.FieldError
	deleteStale := false
	if len(body.DeleteStale) > 0 && string(body.DeleteStale) != "null" {
		if err := json.Unmarshal(body.DeleteStale, &deleteStale); err != nil {
			details = append(details, errs.FieldError{Path: "deleteStale", Message: "must be a boolean"})
		}
	}
	var items []json.RawMessage
	switch {
	case len(body.Listings) == 0 || string(body.Listings) == "null":
		details = append(details, errs.FieldError{Path: "listings", Message: "is required"})
	case json.Unmarshal(body.Listings, &items) != nil:
		details = append(details, errs.FieldError{Path: "listings", Message: "must be an array"})
	case len(items) == 0:
		details = append(details, errs.FieldError{Path: "listings", Message: "must contain at least 1 listing"})
	case len(items) > MaxSync:
		details = append(details, errs.FieldError{Path: "listings",
			Message: fmt.Sprintf("must contain at most %d listings (got %d)", MaxSync, len(items))})
		items = nil
	}
	out := make([]Input, 0, len(items))
	for i, raw := range items {
		in, problems := Parse(raw)
		for _, e := range problems {
			p := "listings." + strconv.Itoa(i)
			if e.Path != "" {
				p += "." + e.Path
			}
			details = append(details, errs.FieldError{Path: p, Message: e.Message})
		}
		out = append(out, in)
	}
	if len(details) > 0 {
		msg := "Validation failed: " + details[0].Path + " " + details[0].Message
		if len(details) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(details)-1)
		}
		return nil, false, &errs.Error{Kind: errs.Invalid, Message: msg, Details: details}
	}
	return out, deleteStale, nil
}
