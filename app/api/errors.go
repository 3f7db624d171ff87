package api

import (
	"errors"
	"net/http"

	callsapi "github.com/agentd/agentd/app/api/calls"
	convapi "github.com/agentd/agentd/app/api/conversations"
	"github.com/agentd/agentd/app/api/httpx"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/sqldb"
)

// Family is an endpoint family. Each keeps the error body shape API.md shows
// for it, so one mapping (writeError) serves every handler.
type Family int

const (
	// FamilyV2: {error:{message, status, timestamp}}; also public routes.
	FamilyV2 Family = iota
	// FamilyKB: {error:{message, status, timestamp}}.
	FamilyKB
	// FamilyListings: {error:{message, status, timestamp}, details:[{path, message}]}.
	FamilyListings
	// FamilyAgents (v1 agents): {success:false, error:{message, code}}.
	FamilyAgents
	// FamilyCalls: {error:{message, code:<http status>}}.
	FamilyCalls
	FamilyOpenAI // /api/v1/openai: OpenAI's error shape, which its clients parse
)

// FieldError names one invalid field of a request body.
type FieldError = errs.FieldError

// Error is the one error type: features return it with a kind, the HTTP
// layer maps the kind to a status in kindStatus.
type Error = errs.Error

// badRequest is a 400 with the given message.
func badRequest(msg string) *Error { return errs.New(errs.Invalid, msg) }

// notFound is a 404 with the given message.
func notFound(msg string) *Error { return errs.New(errs.NotFound, msg) }

// statusCode is the string code of the v1 agent family for a status.
func statusCode(status int) string {
	switch status {
	case 400:
		return "VALIDATION_ERROR"
	case 401:
		return "UNAUTHORIZED"
	case 403:
		return "FORBIDDEN"
	case 404:
		return "NOT_FOUND"
	case 405:
		return "METHOD_NOT_ALLOWED"
	case 409:
		return "CONFLICT"
	case 413:
		return "PAYLOAD_TOO_LARGE"
	case 429:
		return "RATE_LIMITED"
	case 503:
		return "SERVICE_UNAVAILABLE"
	}
	if status >= 500 {
		return "INTERNAL_ERROR"
	}
	return "ERROR"
}

// writeError sends err in the family's shape. 5xx causes are logged with the
// request id and replaced by a generic message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, fam Family, err error) {
	e := httpx.ToError(err)
	st := httpx.StatusOf(e)
	if st == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", errs.DBRetryAfter)
	}
	if st >= 500 {
		// Only the message is sent: toError gives unknown errors a generic
		// one, and a handler's own 5xx (503 "embedding service unavailable")
		// says what the client can do without naming internals.
		if ok, alike := dbLog.Allow(sqldb.Unavailable(err)); ok {
			s.log.ErrorContext(r.Context(), "request failed", "request_id", httpx.RequestID(r.Context()),
				"method", r.Method, "path", r.URL.Path, "status", st, "err", err, "alike_since_last", alike)
		}
		e = &Error{Kind: e.Kind, Message: e.Message}
	} else if e.Err != nil {
		s.log.DebugContext(r.Context(), "request refused", "request_id", httpx.RequestID(r.Context()), "status", st, "err", e.Err)
	}
	httpx.WriteJSON(w, st, errorBody(fam, e, s.now()))
}

var dbLog errs.Throttle // throttles the error logs of the database's absence (request logs stay)

// errorBody is e in the family's shape, with e's status.
func errorBody(fam Family, e *Error, now timeNow) any {
	return statusBody(fam, httpx.StatusOf(e), e, now)
}

// statusBody is e in the family's shape with status st: the OpenAPI
// examples, keyed by status, build their bodies with it.
func statusBody(fam Family, st int, e *Error, now timeNow) any {
	ts := formatTime(now)
	if e.Code == codeRateLimited {
		return map[string]any{"error": map[string]any{"message": e.Message, "code": codeRateLimited,
			"status": st, "retryInSeconds": 60, "timestamp": ts}}
	}
	switch fam {
	case FamilyOpenAI:
		return convapi.ErrorBody(e, st)
	case FamilyAgents:
		code := e.Code
		if code == "" {
			code = statusCode(st)
		}
		return map[string]any{"success": false, "error": map[string]any{"message": e.Message, "code": code}}
	case FamilyCalls:
		return callsapi.ErrorAnswer{Error: callsapi.ErrorOf(e)}
	case FamilyListings:
		body := map[string]any{"error": map[string]any{"message": e.Message, "status": st, "timestamp": ts}}
		if len(e.Details) > 0 {
			body["details"] = e.Details
		}
		return body
	}
	return map[string]any{"error": map[string]any{"message": e.Message, "status": st, "timestamp": ts}}
}

const codeRateLimited = "RATE_LIMITED"

// isNotFound reports whether err is storage's not-found.
func isNotFound(err error) bool { return errors.Is(err, sqldb.ErrNotFound) }
