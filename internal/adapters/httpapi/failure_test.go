package httpapi

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/standmeet/standmeet/internal/domain"
)

// TestRequestErrorsAreLoggedOnceByTheRequestLogger: an error a handler
// returns, one a handler reports with Fail while answering in its own shape
// and one reported with Warn are each logged once, by the request logger,
// with the request's fields; a domain error the contract answers is not a
// failure.
func TestRequestErrorsAreLoggedOnceByTheRequestLogger(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.WarnLevel)
	handlerLog := zap.New(core)
	routes := MounterFunc(func(e *echo.Echo) {
		e.GET("/returned", func(echo.Context) error { return errors.New("returned boom") })
		e.GET("/reported", func(c echo.Context) error {
			Fail(c.Request().Context(), handlerLog, errors.New("reported boom"), zap.String("op", "things.fail"))
			return c.JSON(http.StatusOK, map[string]string{"answer": "in its own shape"})
		})
		e.GET("/warned", func(c echo.Context) error {
			Warn(c.Request().Context(), handlerLog, "id reused", errors.New("other payload"), zap.String("source", "s1"))
			return c.JSON(http.StatusConflict, map[string]string{"answer": "refused"})
		})
		e.GET("/missing", func(c echo.Context) error { return WriteError(c, handlerLog, domain.ErrNotFound) })
	})
	s := New(Deps{Mounters: []Mounter{routes}, Logger: zap.New(core)})

	status, body := call(t, s, http.MethodGet, "/returned", "", "")
	require.Equal(t, http.StatusInternalServerError, status)
	require.Equal(t, "INTERNAL", errCode(body))
	status, _ = call(t, s, http.MethodGet, "/reported", "", "")
	require.Equal(t, http.StatusOK, status)
	status, _ = call(t, s, http.MethodGet, "/missing", "", "")
	require.Equal(t, http.StatusNotFound, status)
	status, _ = call(t, s, http.MethodGet, "/warned", "", "")
	require.Equal(t, http.StatusConflict, status)

	entries := logs.All()
	require.Len(t, entries, 3)
	for i, want := range []struct {
		path, err string
		status    int64
	}{{"/returned", "returned boom", 500}, {"/reported", "reported boom", 200}} {
		require.Equal(t, "request failed", entries[i].Message)
		f := entries[i].ContextMap()
		require.Equal(t, want.path, f["path"])
		require.Equal(t, want.err, f["error"])
		require.Equal(t, want.status, f["status"])
		require.Equal(t, http.MethodGet, f["method"])
		require.NotEmpty(t, f["request_id"])
	}
	require.Equal(t, "things.fail", entries[1].ContextMap()["op"])

	require.Equal(t, zap.WarnLevel, entries[2].Level)
	require.Equal(t, "id reused", entries[2].Message)
	f := entries[2].ContextMap()
	require.Equal(t, "other payload", f["error"])
	require.Equal(t, "s1", f["source"])
	require.Equal(t, "/warned", f["path"])
	require.Equal(t, int64(http.StatusConflict), f["status"])
}

// TestFailOutsideTheServerLogsAtOnce: with no request logger to log it
// later, Fail logs the error itself rather than drop it.
func TestFailOutsideTheServerLogsAtOnce(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.WarnLevel)
	Fail(context.Background(), zap.New(core), errors.New("lonely boom"), zap.String("op", "x"))
	require.Equal(t, 1, logs.Len())
	require.Equal(t, "lonely boom", logs.All()[0].ContextMap()["error"])
	require.Equal(t, "x", logs.All()[0].ContextMap()["op"])
}
