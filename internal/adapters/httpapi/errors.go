package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/domain"
)

// ErrorBody is the contract's error shape:
// {"error":{"code":"SNAKE_CASE_CODE","message":"…"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// StatusOf maps a domain error kind to its HTTP status, once for every route.
func StatusOf(k domain.Kind) int {
	switch k {
	case domain.KindValidation:
		return http.StatusBadRequest
	case domain.KindUnauthorized:
		return http.StatusUnauthorized
	case domain.KindForbidden:
		return http.StatusForbidden
	case domain.KindNotFound:
		return http.StatusNotFound
	case domain.KindConflict:
		return http.StatusConflict
	case domain.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case domain.KindUnprocessable:
		return http.StatusUnprocessableEntity
	case domain.KindRateLimited:
		return http.StatusTooManyRequests
	default:
		return http.StatusInternalServerError
	}
}

// codeOfStatus names the code for errors that do not come from a domain
// (unknown route, wrong method, body over the limit).
func codeOfStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "BAD_REQUEST"
	case http.StatusUnauthorized:
		return "UNAUTHORIZED"
	case http.StatusForbidden:
		return "FORBIDDEN"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusMethodNotAllowed:
		return "METHOD_NOT_ALLOWED"
	case http.StatusRequestEntityTooLarge:
		return "PAYLOAD_TOO_LARGE"
	case http.StatusUnsupportedMediaType:
		return "UNSUPPORTED_MEDIA_TYPE"
	case http.StatusTooManyRequests:
		return "RATE_LIMITED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	default:
		return "INTERNAL"
	}
}

// WriteError writes err in the contract's shape with the fitting status. An
// error that is not a domain error is answered as a 500 without its text, so
// internals never leak, and reported with Fail: the request logger logs it
// once. logger is Fail's fallback outside the server's request logger.
func WriteError(c echo.Context, logger *zap.Logger, err error) error {
	if _, ok := errors.AsType[*panicError](err); ok {
		Fail(c.Request().Context(), logger, err)
		return c.JSON(http.StatusInternalServerError, ErrorBody{Error: ErrorDetail{Code: "INTERNAL", Message: "internal error; see the server log for request " + RequestID(c)}})
	}
	if de := domain.AsError(err); de != nil {
		status := StatusOf(de.Kind)
		if status == http.StatusInternalServerError {
			Fail(c.Request().Context(), logger, err)
		}
		if de.RetryAfter > 0 {
			secs := int64((de.RetryAfter + time.Second - 1) / time.Second)
			c.Response().Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		}
		return c.JSON(status, ErrorBody{Error: ErrorDetail{Code: de.Code, Message: de.Message, Field: de.Field}})
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && m != "" {
			msg = m
		}
		if he.Code >= 500 {
			Fail(c.Request().Context(), logger, err)
			msg = http.StatusText(he.Code)
		}
		return c.JSON(he.Code, ErrorBody{Error: ErrorDetail{Code: codeOfStatus(he.Code), Message: msg}})
	}
	Fail(c.Request().Context(), logger, err)
	return c.JSON(http.StatusInternalServerError, ErrorBody{Error: ErrorDetail{Code: "INTERNAL", Message: "internal error; see the server log for request " + RequestID(c)}})
}

// RequestID returns the request's id (set by the request-id middleware).
func RequestID(c echo.Context) string {
	if id := c.Response().Header().Get(echo.HeaderXRequestID); id != "" {
		return id
	}
	return c.Request().Header.Get(echo.HeaderXRequestID)
}

// panicError is a handler's recovered panic with its stack, on its way to
// the error handler, which logs it.
type panicError struct {
	err   error
	stack []byte
}

func (e *panicError) Error() string { return "panic: " + e.err.Error() }

func (e *panicError) Unwrap() error { return e.err }
