package web_test

import (
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/web"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// TestPageInternalErrorIsLoggedOnce: a page whose op fails inside answers a
// 500 page with the request id only, and the error is logged exactly once,
// by the server's request logger, with the request's fields; a domain error
// (404) is not logged as a failure at all.
func TestPageInternalErrorIsLoggedOnce(t *testing.T) {
	t.Parallel()
	const secret = "disk on fire at 10.9.8.7"
	failing := func(w *world) op.Set {
		var out op.Set
		for _, d := range w.ops() {
			if d.Meta().Name == "webhooks.get" {
				d = declare(w, d.Meta(), func(op.Caller, webhook.IDInput) (webhook.View, error) { return webhook.View{}, errors.New(secret) })
			}
			out = append(out, d)
		}
		return out
	}
	core, logs := observer.New(zap.DebugLevel)
	logger := zap.New(core)
	w := newWorld()
	fa := &fakeAuth{sessions: map[string]uuid.UUID{}, owner: uuid.New()}
	// The page handler and the server share the logger, so a second log
	// line from either would show.
	h, err := web.New(web.Deps{Ops: failing(w), Auth: fa.auth(), Logger: logger})
	require.NoError(t, err)
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Mounters: []httpapi.Mounter{h}, Logger: logger}).Handler())
	t.Cleanup(srv.Close)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	b := &bundle{srv: srv, world: w, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	b.login(t)
	require.Zero(t, logs.FilterLevelExact(zapcore.ErrorLevel).Len(), "signing in fails nothing")

	path := "/admin/webhooks/" + uuid.NewString()
	page := b.get(t, path)
	require.Equal(t, http.StatusInternalServerError, page.status)
	require.NotContains(t, page.body, secret, "internals stay in the log")
	require.Equal(t, http.StatusNotFound, b.get(t, "/admin/inbound/"+uuid.NewString()).status)
	// Close waits for the handlers, whose request logger writes after the
	// answer has gone out.
	srv.Close()

	failures := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	require.Len(t, failures, 1, "logged once, and a domain error (the 404) not at all")
	f := failures[0].ContextMap()
	require.Equal(t, "request failed", failures[0].Message)
	require.Contains(t, f["error"], secret)
	require.Equal(t, path, f["path"])
	require.Equal(t, http.MethodGet, f["method"])
	require.EqualValues(t, http.StatusInternalServerError, f["status"])
	require.NotEmpty(t, f["request_id"])
	require.Contains(t, page.body, f["request_id"], "the page names the request the log line carries")
	require.Equal(t, 1, logs.FilterMessage("http request").FilterField(zap.String("path", path)).Len())
}
