package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/agentd/agentd/app/access"
	"github.com/agentd/agentd/internal/errs"
)

// exampleTime is the timestamp generated error examples show.
var exampleTime = time.Date(2026, 11, 23, 10, 48, 50, 123e6, time.UTC)

// errorExample is the body rt answers with status code, built by the
// errorBody the handlers use: the examples file's message (or whole body),
// else what the middleware or a typical handler says.
func errorExample(rt route) func(string, json.RawMessage) (json.RawMessage, error) {
	return func(code string, given json.RawMessage) (json.RawMessage, error) {
		var msg string
		if len(given) > 0 {
			if given[0] != '"' {
				return given, nil
			}
			if err := json.Unmarshal(given, &msg); err != nil {
				return nil, err
			}
		}
		st, err := strconv.Atoi(code)
		if err != nil {
			return nil, err
		}
		if msg == "" {
			msg = defaultErrorMessage(rt, st)
		}
		return json.Marshal(statusBody(rt.family, st, &Error{Message: msg}, exampleTime))
	}
}

// defaultErrorMessage is what the API says for a status when the examples
// file names nothing more precise.
func defaultErrorMessage(rt route, st int) string {
	switch st {
	case http.StatusBadRequest:
		return "malformed JSON: unexpected end of body"
	case http.StatusUnauthorized:
		return errNoKey.Error()
	case http.StatusForbidden:
		return "insufficient permissions: this key's role (viewer) lacks " + rt.capability
	case http.StatusNotFound:
		return "not found"
	case http.StatusConflict:
		return "conflict"
	case http.StatusRequestEntityTooLarge:
		return fmt.Sprintf("request body too large (max %d bytes)", rt.bodyLimit)
	case http.StatusTooManyRequests:
		return access.ErrThrottled.Message
	case http.StatusServiceUnavailable:
		return "embedding service unavailable"
	}
	return "Internal server error"
}

// rateLimitedExample is the body of the shared 429 response.
func rateLimitedExample() json.RawMessage {
	b, _ := json.Marshal(errorBody(FamilyV2, &Error{Kind: errs.RateLimited, Code: codeRateLimited,
		Message: "Rate limit exceeded: 1000 requests per minute. Retry in 60 seconds."}, exampleTime))
	return b
}
