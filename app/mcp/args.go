package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/jsonbody"
)

// MaxArguments bounds a tool call's arguments: the largest HTTP twin body
// (a knowledge source, 2 MB) with room for its JSON.
const MaxArguments = 2<<20 + 64<<10

// object is the arguments as a JSON object ("{}" when absent), bounded.
func object(raw json.RawMessage) ([]byte, error) {
	if len(raw) > MaxArguments {
		return nil, errs.New(errs.TooLarge, fmt.Sprintf("arguments: at most %d bytes", MaxArguments))
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return []byte("{}"), nil
	}
	return t, nil
}

// decodeArgs decodes the arguments into dst as the HTTP twin decodes its
// body (jsonbody: the same messages for the same mistakes).
func decodeArgs(raw json.RawMessage, dst any) error {
	b, err := object(raw)
	if err != nil {
		return err
	}
	if err := jsonbody.Decode(b, dst); err != nil {
		return argsError(err)
	}
	return nil
}

// argsError words a body error for arguments ("request body" is the HTTP
// twin's word).
func argsError(err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		c := *e
		c.Message = strings.ReplaceAll(c.Message, "request body", "arguments")
		return &c
	}
	return err
}

// query turns the arguments into the query string the twin GET reads, so
// the same parser validates them: strings, numbers and booleans, and
// arrays of them for a repeated parameter.
func query(raw json.RawMessage) (url.Values, error) {
	b, err := object(raw)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := jsonbody.Decode(b, &m); err != nil {
		return nil, argsError(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	v := url.Values{}
	for _, k := range keys {
		var arr []json.RawMessage
		if json.Unmarshal(m[k], &arr) == nil && arr != nil {
			for _, x := range arr {
				s, err := scalar(k, x)
				if err != nil {
					return nil, err
				}
				v.Add(k, s)
			}
			continue
		}
		s, err := scalar(k, m[k])
		if err != nil {
			return nil, err
		}
		if s != "" || !bytes.Equal(bytes.TrimSpace(m[k]), []byte("null")) {
			v.Set(k, s)
		}
	}
	return v, nil
}

// scalar is one query value: a string as it is, a number or a boolean as
// written, null as absent.
func scalar(key string, raw json.RawMessage) (string, error) {
	var x any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return "", errs.InvalidField(key, "must be a string, a number or a boolean")
	}
	switch t := x.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case json.Number:
		return t.String(), nil
	case bool:
		return strconv.FormatBool(t), nil
	}
	return "", errs.InvalidField(key, "must be a string, a number or a boolean")
}

// idArg is the required id of a get or action tool.
func idArg(raw json.RawMessage) (string, error) {
	var in struct {
		ID *string `json:"id"`
	}
	if err := decodeArgs(raw, &in); err != nil {
		return "", err
	}
	if in.ID == nil || strings.TrimSpace(*in.ID) == "" {
		return "", errs.InvalidField("id", "required")
	}
	return *in.ID, nil
}

// withoutID is the arguments less their id: an update's fields.
func withoutID(raw json.RawMessage) (string, json.RawMessage, error) {
	id, err := idArg(raw)
	if err != nil {
		return "", nil, err
	}
	var m map[string]json.RawMessage
	b, _ := object(raw)
	if err := json.Unmarshal(b, &m); err != nil {
		return "", nil, errs.Invalidf("arguments must be a JSON object")
	}
	delete(m, "id")
	out, err := json.Marshal(m)
	return id, out, err
}
