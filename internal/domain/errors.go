package domain

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies a domain error; each surface maps a Kind to its own status
// (HTTP status, MCP tool error) exactly once.
type Kind int

// The kinds of domain error, one per status of the contract.
const (
	KindInternal      Kind = iota // 500: a bug or an infrastructure failure
	KindValidation                // 400: the input is malformed
	KindUnauthorized              // 401: no or bad credentials
	KindForbidden                 // 403: authenticated but not allowed
	KindNotFound                  // 404: not found, or not the caller's
	KindConflict                  // 409: conflicts with the current state
	KindTooLarge                  // 413: over a size limit
	KindUnprocessable             // 422: well-formed but semantically wrong
	KindRateLimited               // 429: too many requests
)

// Error is a domain error value: a Kind, a stable SNAKE_CASE code that clients
// rely on, and a human message. Compare with errors.As or errors.Is, never by
// text.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	// Field names the input field at fault, when there is one.
	Field string
	// RetryAfter, on a rate-limit error, says when trying again can
	// succeed; REST answers it as Retry-After.
	RetryAfter time.Duration
}

// Error implements error.
func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Field)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Is makes errors.Is match two domain errors with the same Kind and Code, so a
// sentinel such as ErrNotFound matches a freshly built NotFound error.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Kind == e.Kind && t.Code == e.Code
}

// WithField returns a copy of e naming the input field at fault.
func (e *Error) WithField(field string) *Error {
	c := *e
	c.Field = field
	return &c
}

// WithRetryAfter returns a copy of e saying when to try again.
func (e *Error) WithRetryAfter(d time.Duration) *Error {
	c := *e
	c.RetryAfter = d
	return &c
}

// Validation builds a 400 error.
func Validation(code, message string) *Error {
	return &Error{Kind: KindValidation, Code: code, Message: message}
}

// Unauthorized builds a 401 error.
func Unauthorized(code, message string) *Error {
	return &Error{Kind: KindUnauthorized, Code: code, Message: message}
}

// Forbidden builds a 403 error.
func Forbidden(code, message string) *Error {
	return &Error{Kind: KindForbidden, Code: code, Message: message}
}

// NotFound builds a 404 error.
func NotFound(code, message string) *Error {
	return &Error{Kind: KindNotFound, Code: code, Message: message}
}

// Conflict builds a 409 error.
func Conflict(code, message string) *Error {
	return &Error{Kind: KindConflict, Code: code, Message: message}
}

// TooLarge builds a 413 error.
func TooLarge(code, message string) *Error {
	return &Error{Kind: KindTooLarge, Code: code, Message: message}
}

// Unprocessable builds a 422 error.
func Unprocessable(code, message string) *Error {
	return &Error{Kind: KindUnprocessable, Code: code, Message: message}
}

// RateLimited builds a 429 error.
func RateLimited(code, message string) *Error {
	return &Error{Kind: KindRateLimited, Code: code, Message: message}
}

// ErrNotFound is the generic "not found or not yours" error. Adapters return
// it (wrapped) when a row does not exist for the calling owner.
var ErrNotFound = NotFound("NOT_FOUND", "not found")

// AsError returns the domain error in err's chain, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
