// Package jsonbody decodes the JSON object of a request, or of one item of
// a batch, into bad-input errors that name what is wrong. It knows nothing
// of HTTP: the package app and the batch use case (app/calls) share it, and
// a use case tells "not an object" from other failures by ErrNotObject, not
// by the text of a message.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/errs"
)

// ErrNotObject is wrapped by the error of a value that is not a JSON object.
var ErrNotObject = errors.New("not a JSON object")

func invalid(msg string) *errs.Error { return errs.New(errs.Invalid, msg) }

// Decode decodes body, one JSON object, into dst. Every failure is an
// *errs.Error of kind Invalid naming what is wrong: empty, not UTF-8, not an
// object (wrapping ErrNotObject), malformed, a field of the wrong type, or
// data after the value. Unknown fields are ignored.
func Decode(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return invalid("request body is empty: a JSON object is required")
	}
	if !utf8.Valid(body) {
		return invalid("request body is not valid UTF-8")
	}
	if first := bytes.TrimLeft(body, " \t\r\n"); first[0] != '{' {
		return errs.Wrap(errs.Invalid, "request body must be a JSON object", ErrNotObject)
	}
	if err := checkEscapes(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("unexpected data after the JSON body")
	}
	return nil
}

// jsonError turns an encoding/json error into bad input naming the field.
func jsonError(err error) *errs.Error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return invalid(fmt.Sprintf("malformed JSON at byte %d: %s", se.Offset, se.Error()))
	case errors.As(err, &te):
		if te.Field == "" {
			return errs.Wrap(errs.Invalid, "request body must be "+errs.JSONKind(te.Type.Kind().String()), ErrNotObject)
		}
		return invalid(fmt.Sprintf("%s: must be %s", te.Field, errs.JSONKind(te.Type.Kind().String())))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("malformed JSON: unexpected end of body")
	}
	msg := err.Error()
	if strings.Contains(msg, "exceeded max depth") {
		return invalid("malformed JSON: nested too deeply")
	}
	return invalid("malformed JSON: " + strings.TrimPrefix(msg, "json: "))
}

// checkEscapes refuses string escapes that decode to text we never want to
// store: NUL (\u0000), which truncates C strings and log lines, and unpaired
// UTF-16 surrogates, which encoding/json would silently turn into U+FFFD.
func checkEscapes(body []byte) error {
	inString := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(body) {
				return nil // the decoder reports the truncation
			}
			if body[i+1] != 'u' {
				i++
				continue
			}
			r, ok := hex4(body, i+2)
			if !ok {
				return nil // malformed escape: the decoder reports it
			}
			switch {
			case r == 0:
				return invalid("strings must not contain NUL (\\u0000) characters")
			case r >= 0xD800 && r <= 0xDBFF:
				if lo, ok := hex4(body, i+8); !ok || body[i+6] != '\\' || body[i+7] != 'u' || lo < 0xDC00 || lo > 0xDFFF {
					return invalid("strings must not contain unpaired UTF-16 surrogates")
				}
				i += 11
			case r >= 0xDC00 && r <= 0xDFFF:
				return invalid("strings must not contain unpaired UTF-16 surrogates")
			default:
				i += 5
			}
		}
	}
	return nil
}

// hex4 parses the four hex digits at body[at:at+4].
func hex4(body []byte, at int) (rune, bool) {
	if at+4 > len(body) {
		return 0, false
	}
	var r rune
	for _, c := range body[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Encode is v as the API writes JSON: no HTML escaping (an event body or
// stored metadata keeps "<" as is) and no trailing newline.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
