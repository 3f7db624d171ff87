// Package errs is the one error type below the HTTP layer. Feature packages
// say what went wrong (a Kind and, for bad input, the field's path); the
// package app alone turns a Kind into a status and an error body.
package errs

import (
	"errors"
	"fmt"
)

// Kind is what went wrong, independent of any transport.
type Kind uint8

const (
	Internal         Kind = iota // a bug or an outage we did not expect: logged, never detailed to the client
	Invalid                      // the input is wrong; fix it and retry
	NotFound                     // no such resource (or not visible to the caller)
	Conflict                     // the resource's state does not allow it now
	Forbidden                    // the caller may not do this
	Unauthenticated              // no valid credentials
	Unavailable                  // a dependency is down; retry later
	TooLarge                     // the input exceeds a size limit
	RateLimited                  // too many requests
	MethodNotAllowed             // the resource exists, not with this verb
	Canceled                     // the caller went away
	BadGateway                   // a service we call (the model) failed or is down: 502 naming it
	GatewayTimeout               // a service we call (the model) was too slow: 504
)

var kindNames = [...]string{"internal", "invalid", "not found", "conflict", "forbidden",
	"unauthenticated", "unavailable", "too large", "rate limited", "method not allowed", "canceled",
	"bad gateway", "gateway timeout"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// FieldError names one invalid field of an input.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Error is the error every feature package returns for an expected failure.
// Message is meant for the client; Err is the cause, logged and never sent.
type Error struct {
	Kind    Kind
	Message string
	Field   string       // path of the offending field ("" when none)
	Details []FieldError // several invalid fields at once (listings)
	Code    string       // a machine code where the contract names one ("RATE_LIMITED")
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// New is an error of kind with a client message.
func New(kind Kind, msg string) *Error { return &Error{Kind: kind, Message: msg} }

// Wrap is an error of kind with a client message and a logged cause.
func Wrap(kind Kind, msg string, err error) *Error { return &Error{Kind: kind, Message: msg, Err: err} }

// Invalidf is bad input, with a formatted message.
func Invalidf(format string, args ...any) *Error {
	return &Error{Kind: Invalid, Message: fmt.Sprintf(format, args...)}
}

// InvalidField is bad input in one field: the message reads "path: msg".
func InvalidField(path, msg string) *Error {
	return &Error{Kind: Invalid, Field: path, Message: path + ": " + msg}
}

// NotFoundf is a missing resource, with a formatted message.
func NotFoundf(format string, args ...any) *Error {
	return &Error{Kind: NotFound, Message: fmt.Sprintf(format, args...)}
}

// KindOf is the kind of err: Internal unless it wraps an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// Is reports whether err is an *Error of kind.
func Is(err error, kind Kind) bool { return err != nil && KindOf(err) == kind }
