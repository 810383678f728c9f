package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerServesHealthReadinessAndTheErrorContract boots the real
// composition root on a fresh database.
func TestServerServesHealthReadinessAndTheErrorContract(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})

	status, body := ts.do(t, http.MethodGet, "/healthz", "", "")
	require.Equal(t, http.StatusOK, status, body)
	status, body = ts.do(t, http.MethodGet, "/readyz", "", "")
	require.Equal(t, http.StatusOK, status, body)

	// Unknown routes and missing credentials answer in the contract's shape.
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{http.MethodGet, "/api/admin/no-such-thing", http.StatusNotFound, "NOT_FOUND"},
		{http.MethodGet, "/api/admin/events", http.StatusUnauthorized, ""},
	} {
		status, body := ts.do(t, c.method, c.path, "", "")
		require.Equal(t, c.status, status, body)
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &e), body)
		require.NotEmpty(t, e.Error.Code)
		require.NotEmpty(t, e.Error.Message)
		if c.code != "" {
			require.Equal(t, c.code, e.Error.Code)
		}
	}

	status, body = ts.do(t, http.MethodGet, "/metrics", ts.operatorKey(t), "")
	require.Equal(t, http.StatusOK, status)
	require.True(t, strings.Contains(body, "go_goroutines"), "metrics exposes the Go collector")
	require.Contains(t, body, "standmeet_", "metrics exposes the event bus")
	for _, name := range []string{"snoozes_total", "wakes_total", "handoffs_total", "in_flight", "waiting"} {
		require.Contains(t, body, "\nstandmeet_webhook_flow_"+name+" ", "metrics exposes the webhook flow's %s", name)
	}
}

// TestReadyzReportsPendingMigrations: readiness means the schema is current.
func TestReadyzReportsPendingMigrations(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	_, err := ts.App.Pool.Exec(t.Context(), `DELETE FROM schema_migrations WHERE version = '0010_events'`)
	require.NoError(t, err)
	status, body := ts.do(t, http.MethodGet, "/readyz", "", "")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "MIGRATIONS_PENDING")
	require.Contains(t, body, "0010_events")
}

func TestBuildVersionPrefersTheLinkedVersion(t *testing.T) {
	// Not parallel: it sets the package's link-time variable.
	saved := version
	t.Cleanup(func() { version = saved })
	version = ""
	require.Equal(t, "dev", buildVersion(), "go test stamps no module version")
	version = "v1.2.3-4-gabcdef0"
	require.Equal(t, "v1.2.3-4-gabcdef0", buildVersion())
}
