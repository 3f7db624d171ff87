package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/app/errs"
)

// decodeJSON reads the size-limited request body and decodes it into dst.
// Every failure is a 4xx *Error naming what is wrong: a body over the
// route's limit (413), empty, not UTF-8, malformed, a field of the wrong
// type, or data after the JSON value (400). Unknown fields are ignored.
func decodeJSON(r *http.Request, dst any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errorf(http.StatusRequestEntityTooLarge, fmt.Sprintf("request body too large (max %d bytes)", mbe.Limit))
		}
		return badRequest("could not read request body")
	}
	return decodeBytes(body, dst)
}

// decodeBytes is decodeJSON on a body already read.
func decodeBytes(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("request body is empty: a JSON object is required")
	}
	if !utf8.Valid(body) {
		return badRequest("request body is not valid UTF-8")
	}
	if first := bytes.TrimLeft(body, " \t\r\n"); first[0] != '{' {
		return badRequest("request body must be a JSON object")
	}
	if err := checkEscapes(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("unexpected data after the JSON body")
	}
	return nil
}

// jsonError turns an encoding/json error into a 400 naming the field.
func jsonError(err error) *Error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return badRequest(fmt.Sprintf("malformed JSON at byte %d: %s", se.Offset, se.Error()))
	case errors.As(err, &te):
		if te.Field == "" {
			return badRequest("request body must be " + errs.JSONKind(te.Type.Kind().String()))
		}
		return badRequest(fmt.Sprintf("%s: must be %s", te.Field, errs.JSONKind(te.Type.Kind().String())))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed JSON: unexpected end of body")
	}
	msg := err.Error()
	if strings.Contains(msg, "exceeded max depth") {
		return badRequest("malformed JSON: nested too deeply")
	}
	return badRequest("malformed JSON: " + strings.TrimPrefix(msg, "json: "))
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
				return badRequest("strings must not contain NUL (\\u0000) characters")
			case r >= 0xD800 && r <= 0xDBFF:
				if lo, ok := hex4(body, i+8); !ok || body[i+6] != '\\' || body[i+7] != 'u' || lo < 0xDC00 || lo > 0xDFFF {
					return badRequest("strings must not contain unpaired UTF-16 surrogates")
				}
				i += 11
			case r >= 0xDC00 && r <= 0xDFFF:
				return badRequest("strings must not contain unpaired UTF-16 surrogates")
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
