package httpapi

import (
	"context"
	"errors"
	"sync"

	"go.uber.org/zap"
)

// failure is an error of a request with the fields its reporter adds to the
// log line; warning, when set, makes it a Warn line with that message.
type failure struct {
	err     error
	fields  []zap.Field
	warning string
}

// failures holds the server-side errors of one request until the request
// logger logs them. Handlers that answer on other goroutines (the MCP
// transport) report into it too, hence the lock.
type failures struct {
	mu   sync.Mutex
	list []failure
}

func (f *failures) add(x failure) {
	f.mu.Lock()
	f.list = append(f.list, x)
	f.mu.Unlock()
}

func (f *failures) take() []failure {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.list
	f.list = nil
	return out
}

type failuresKey struct{}

func withFailures(ctx context.Context, f *failures) context.Context {
	return context.WithValue(ctx, failuresKey{}, f)
}

// Fail reports err as a server-side failure of the request ctx belongs to.
// The answer stays the caller's (the JSON error shape, an admin page, an MCP
// tool result); the log line is the server's request logger's, written once
// after the handler returns, with the request's id, method, path and status
// and the given fields. So every request error is logged in one place, once,
// whatever surface answered it.
//
// A handler served outside the server's request logger (mounted on a bare
// Echo) has no one to log the error later, so Fail logs it on logger at once
// rather than drop it.
func Fail(ctx context.Context, logger *zap.Logger, err error, fields ...zap.Field) {
	report(ctx, logger, failure{err: err, fields: fields})
}

// Warn reports an error of the request ctx belongs to that the operator
// should see though the answer is not a server failure (an inbound message
// id reused with another payload, a 503 while the database is unreachable,
// a fallback taken): the request logger logs msg at Warn level, once, with
// the request's fields, the given fields and err. Outside the server's
// request logger it is logged on logger at once, as with Fail.
func Warn(ctx context.Context, logger *zap.Logger, msg string, err error, fields ...zap.Field) {
	report(ctx, logger, failure{err: err, fields: fields, warning: msg})
}

func report(ctx context.Context, logger *zap.Logger, x failure) {
	if f, ok := ctx.Value(failuresKey{}).(*failures); ok {
		f.add(x)
		return
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	logFailure(logger, x)
}

// logFailure writes the one log line of a request error: a warning under its
// message, a recovered panic with its stack, anything else as "request
// failed".
func logFailure(logger *zap.Logger, x failure, request ...zap.Field) {
	fields := append(append([]zap.Field(nil), request...), x.fields...)
	if x.warning != "" {
		logger.Warn(x.warning, append(fields, zap.Error(x.err))...)
		return
	}
	if pe, ok := errors.AsType[*panicError](x.err); ok {
		logger.Error("panic in handler", append(fields, zap.Error(pe.err), zap.ByteString("stack", pe.stack))...)
		return
	}
	logger.Error("request failed", append(fields, zap.Error(x.err))...)
}
