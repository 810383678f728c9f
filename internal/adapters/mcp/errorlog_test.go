package mcp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/mcp"
	"github.com/standmeet/standmeet/internal/adapters/openapi/optest"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// TestToolInternalErrorIsLoggedOnce: a tool whose op fails inside answers a
// tool error (in a 200 JSON-RPC answer) without the error's text, and the
// error is logged exactly once, by the server's request logger, with the
// request's fields and the op; a domain error is not logged as a failure.
func TestToolInternalErrorIsLoggedOnce(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.DebugLevel)
	logger := zap.New(core)
	owner := uuid.New()
	auth := httpapi.AuthenticatorFunc(func(r *http.Request) (op.Caller, error) {
		if r.Header.Get("Authorization") == "Bearer key" {
			return op.Caller{OwnerID: owner}, nil
		}
		return op.Caller{}, domain.Unauthorized("UNAUTHORIZED", "no or bad credentials")
	})
	// The MCP handler (and the SDK's logger under it) and the server share
	// the logger, so a second log line from either would show.
	h, err := mcp.New(optest.Endpoints(), auth, logger, mcp.Options{Version: "test"})
	require.NoError(t, err)
	srv := httptest.NewServer(httpapi.New(httpapi.Deps{Mounters: []httpapi.Mounter{h}, Logger: logger}).Handler())
	t.Cleanup(srv.Close)

	cs, err := connect(t, srv.URL+mcp.Path, "key")
	require.NoError(t, err)
	res := call(t, cs, "things_fail", nil)
	require.True(t, res.IsError)
	require.Equal(t, "INTERNAL", mcp.ErrorOf(res).Code)
	require.NotContains(t, mcp.ErrorOf(res).Message, "10.1.2.3")
	res = call(t, cs, "things_get", map[string]any{"id": uuid.New()})
	require.Equal(t, "THING_NOT_FOUND", mcp.ErrorOf(res).Code)
	require.NoError(t, cs.Close())
	// Close waits for the handlers, whose request logger writes after the
	// answer has gone out.
	srv.Close()

	failures := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	var messages []string
	for _, e := range logs.All() {
		messages = append(messages, e.Message)
	}
	require.Len(t, failures, 1, "logged once, and the domain error not at all: %q", messages)
	require.Equal(t, "request failed", failures[0].Message)
	f := failures[0].ContextMap()
	require.Contains(t, f["error"], "database on fire at 10.1.2.3")
	require.Equal(t, "things.fail", f["op"])
	require.Equal(t, mcp.Path, f["path"])
	require.Equal(t, http.MethodPost, f["method"])
	require.EqualValues(t, http.StatusOK, f["status"], "the tool error travels in a JSON-RPC answer")
	require.NotEmpty(t, f["request_id"])
	access := logs.FilterMessage("http request").FilterField(zap.String("request_id", f["request_id"].(string))).Len()
	require.Equal(t, 1, access, "the failure belongs to one logged request")
}
