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
			return badRequest(fmt.Sprintf("request body must be a JSON %s", jsonKind(te.Type.Kind().String())))
		}
		return badRequest(fmt.Sprintf("%s: must be %s", te.Field, jsonKind(te.Type.Kind().String())))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed JSON: unexpected end of body")
	}
	msg := err.Error()
	if strings.Contains(msg, "exceeded max depth") {
		return badRequest("malformed JSON: nested too deeply")
	}
	return badRequest("malformed JSON: " + strings.TrimPrefix(msg, "json: "))
}

// jsonKind names a Go kind the way a JSON user thinks of it.
func jsonKind(k string) string {
	switch k {
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	}
	return "of another type"
}
