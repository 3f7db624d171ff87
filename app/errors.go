package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/agentd/agentd/storage"
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
)

// FieldError names one invalid field of a request body.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Error is the one error type handlers return. Message is sent to the
// client; Err is logged and never sent.
type Error struct {
	Status  int
	Message string
	Code    string       // machine code where a family sends one ("RATE_LIMITED", "NOT_FOUND")
	Details []FieldError // listings validation
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// errorf builds an Error with a client message.
func errorf(status int, msg string) *Error { return &Error{Status: status, Message: msg} }

// badRequest is a 400 with the given message.
func badRequest(msg string) *Error { return errorf(http.StatusBadRequest, msg) }

// notFound is a 404 with the given message.
func notFound(msg string) *Error { return errorf(http.StatusNotFound, msg) }

// toError maps any error to an *Error: our own pass through, storage
// sentinels map to their status, everything else is a 500 without detail.
func toError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return errorf(http.StatusRequestEntityTooLarge, "request body too large")
	case errors.Is(err, storage.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Message: "not found", Err: err}
	case errors.Is(err, storage.ErrConflict):
		return &Error{Status: http.StatusConflict, Message: "conflict", Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Status: 499, Message: "client closed request", Err: err}
	}
	return &Error{Status: http.StatusInternalServerError, Message: "Internal server error", Err: err}
}

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
	}
	if status >= 500 {
		return "INTERNAL_ERROR"
	}
	return "ERROR"
}

// writeError sends err in the family's shape. 5xx causes are logged with the
// request id and replaced by a generic message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, fam Family, err error) {
	e := toError(err)
	if e.Status >= 500 {
		// Only the message is sent: toError gives unknown errors a generic
		// one, and a handler's own 5xx (503 "embedding service unavailable")
		// says what the client can do without naming internals.
		s.log.ErrorContext(r.Context(), "request failed", "request_id", requestID(r.Context()),
			"method", r.Method, "path", r.URL.Path, "status", e.Status, "err", err)
		e = &Error{Status: e.Status, Message: e.Message}
	} else if e.Err != nil {
		s.log.DebugContext(r.Context(), "request refused", "request_id", requestID(r.Context()), "status", e.Status, "err", e.Err)
	}
	writeJSON(w, e.Status, errorBody(fam, e, s.now()))
}

func errorBody(fam Family, e *Error, now timeNow) any {
	ts := formatTime(now)
	if e.Code == codeRateLimited {
		return map[string]any{"error": map[string]any{"message": e.Message, "code": codeRateLimited,
			"status": e.Status, "retryInSeconds": 60, "timestamp": ts}}
	}
	switch fam {
	case FamilyAgents:
		code := e.Code
		if code == "" {
			code = statusCode(e.Status)
		}
		return map[string]any{"success": false, "error": map[string]any{"message": e.Message, "code": code}}
	case FamilyCalls:
		return map[string]any{"error": map[string]any{"message": e.Message, "code": e.Status}}
	case FamilyListings:
		body := map[string]any{"error": map[string]any{"message": e.Message, "status": e.Status, "timestamp": ts}}
		if len(e.Details) > 0 {
			body["details"] = e.Details
		}
		return body
	}
	return map[string]any{"error": map[string]any{"message": e.Message, "status": e.Status, "timestamp": ts}}
}

const codeRateLimited = "RATE_LIMITED"

// logAttrs is a helper for structured logs of a request.
func logAttrs(r *http.Request) []any {
	return []any{slog.String("request_id", requestID(r.Context())), slog.String("path", r.URL.Path)}
}

// isNotFound reports whether err is storage's not-found.
func isNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }
