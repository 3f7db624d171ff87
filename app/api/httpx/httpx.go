// Package httpx is the one helper package of the API's handler packages
// (app/api and app/api/<feature>): the request's caller and id, the body
// decoder, the JSON writers, the clock, and the one mapping of an error's
// kind to an HTTP status. Plain functions, so a handler package needs
// nothing passed in to decode, answer or fail like every other.
package httpx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/agentd/agentd/internal/apitime"
	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/internal/jsonbody"
	"github.com/agentd/agentd/storage/sqldb"
)

// Principal is who a request acts as; the API's authentication sets it.
type Principal struct {
	KeyID    string
	OrgID    string // empty for the internal service key
	UserID   string
	Role     string
	Prefix   string
	Internal bool
	Session  string // the session token when the dashboard cookie authenticated
	CSRF     string // the session's CSRF token
}

type principalKey struct{}

// WithPrincipal is ctx carrying the request's caller.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalOf is the authenticated caller of the request.
func PrincipalOf(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}

// OrgID is the organization the request is scoped to.
func OrgID(r *http.Request) string { return PrincipalOf(r.Context()).OrgID }

// RequestInfo is per-request state the server's outer middleware sets and
// logs at the end.
type RequestInfo struct {
	ID        string
	KeyPrefix string
	Route     int // 1 + index in the route table of the matched route; 0: none
}

type requestInfoKey struct{}

// WithRequestInfo is ctx carrying the request's info.
func WithRequestInfo(ctx context.Context, ri *RequestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, ri)
}

// RequestInfoOf is the request's info (nil outside the server).
func RequestInfoOf(ctx context.Context) *RequestInfo {
	ri, _ := ctx.Value(requestInfoKey{}).(*RequestInfo)
	return ri
}

// RequestID is the id of the request being served ("" outside one).
func RequestID(ctx context.Context) string {
	if ri := RequestInfoOf(ctx); ri != nil {
		return ri.ID
	}
	return ""
}

// LogAttrs are the request's id and path, for a log line.
func LogAttrs(r *http.Request) []any {
	return []any{"request_id", RequestID(r.Context()), "path", r.URL.Path}
}

// Now is the clock of the answers' timestamps (UTC).
func Now() time.Time { return time.Now().UTC() }

// ReadBody reads the size-limited request body: over the route's limit is
// 413, any other read failure 400.
func ReadBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errs.New(errs.TooLarge, fmt.Sprintf("request body too large (max %d bytes)", mbe.Limit))
		}
		return nil, errs.New(errs.Invalid, "could not read request body")
	}
	return body, nil
}

// Decode reads the size-limited request body and decodes it into dst.
// Every failure is a 4xx error naming what is wrong: a body over the
// route's limit (413), empty, not UTF-8, malformed, a field of the wrong
// type, or data after the JSON value (400). Unknown fields are ignored.
func Decode(r *http.Request, dst any) error {
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	return DecodeBytes(body, dst)
}

// DecodeBytes is Decode on a body already read.
func DecodeBytes(body []byte, dst any) error { return jsonbody.Decode(body, dst) }

// WriteJSON writes v as the JSON response body with the status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"message":"Internal server error","status":500}}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// Meta is the {timestamp} object of the /v2 envelope.
type Meta struct {
	Timestamp string `json:"timestamp"`
}

// Envelope is the /v2 success body {data, meta}.
type Envelope[T any] struct {
	Data T    `json:"data"`
	Meta Meta `json:"meta"`
}

// WriteData writes data in the /v2 envelope {data, meta:{timestamp}}.
func WriteData(w http.ResponseWriter, status int, data any) {
	WriteJSON(w, status, Envelope[any]{Data: data, Meta: Meta{Timestamp: apitime.Format(Now())}})
}

// kindStatus is the one mapping from an error's kind to an HTTP status.
var kindStatus = map[errs.Kind]int{
	errs.Internal:         http.StatusInternalServerError,
	errs.Invalid:          http.StatusBadRequest,
	errs.NotFound:         http.StatusNotFound,
	errs.Conflict:         http.StatusConflict,
	errs.Forbidden:        http.StatusForbidden,
	errs.Unauthenticated:  http.StatusUnauthorized,
	errs.Unavailable:      http.StatusServiceUnavailable,
	errs.TooLarge:         http.StatusRequestEntityTooLarge,
	errs.RateLimited:      http.StatusTooManyRequests,
	errs.MethodNotAllowed: http.StatusMethodNotAllowed,
	errs.Canceled:         499,
	errs.BadGateway:       http.StatusBadGateway,
	errs.GatewayTimeout:   http.StatusGatewayTimeout,
}

// StatusOf is the HTTP status of e.
func StatusOf(e *errs.Error) int {
	if st, ok := kindStatus[e.Kind]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// ToError maps any error to an *errs.Error: our own pass through, storage
// sentinels map to their kind, everything else is a 500 without detail.
func ToError(err error) *errs.Error {
	var e *errs.Error
	if errors.As(err, &e) {
		return e
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return errs.New(errs.TooLarge, "request body too large")
	case errors.Is(err, sqldb.ErrNotFound):
		return errs.Wrap(errs.NotFound, "not found", err)
	case errors.Is(err, sqldb.ErrConflict):
		return errs.Wrap(errs.Conflict, "conflict", err)
	case errors.Is(err, context.Canceled):
		return errs.Wrap(errs.Canceled, "client closed request", err)
	case sqldb.Unavailable(err):
		return errs.Wrap(errs.Unavailable, errs.DBUnavailable, err)
	}
	return errs.Wrap(errs.Internal, "Internal server error", err)
}

// Status is the HTTP status and client message of err, for an error that
// happens after a stream has started (the answer's status is sent).
func Status(err error) (int, string) {
	e := ToError(err)
	return StatusOf(e), e.Message
}

// ClientAddr is the client's IP address (sign-in throttling, the widget's
// per-address limits). Behind a proxy every client shares the proxy's
// address (documented).
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
