package main

// Endpoint settings, soft delete, the filtered list, the events view's API
// and the operator's gauges, through the real server's REST surface.

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/webhookdb"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
)

func TestEndpointSettingsSoftDeleteAndGaugesOverREST(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.0/8"}})
	o := newSurfaceOwner(t, ts)

	// Bad settings and filters: 400 with the field's code, nothing stored.
	for body, code := range map[string]string{
		`{"url":"http://127.0.0.1:9/x","event_types":["booking.*"],"timeout_seconds":11}`: "INVALID_TIMEOUT",
		`{"url":"http://127.0.0.1:9/x","event_types":["booking.*"],"timeout_seconds":0}`:  "INVALID_TIMEOUT",
		`{"url":"http://127.0.0.1:9/x","event_types":["booking.*"],"max_attempts":19}`:    "INVALID_MAX_ATTEMPTS",
		`{"url":"http://127.0.0.1:9/x","event_types":["booking.*"],"max_attempts":0}`:     "INVALID_MAX_ATTEMPTS",
	} {
		status, resp := ts.do(t, http.MethodPost, "/api/admin/webhooks", o.Key, body)
		require.Equal(t, http.StatusBadRequest, status, resp)
		require.Contains(t, resp, `"`+code+`"`)
	}
	for query, code := range map[string]string{
		"state=paused": "INVALID_STATE", "event_type=nope.never": "INVALID_EVENT_TYPE", "sort=rate": "INVALID_SORT",
		"sort=url&cursor=zzz": "INVALID_CURSOR",
	} {
		status, resp := ts.do(t, http.MethodGet, "/api/admin/webhooks?"+query, o.Key, "")
		require.Equal(t, http.StatusBadRequest, status, resp)
		require.Contains(t, resp, `"`+code+`"`)
	}
	for query, code := range map[string]string{
		"since=yesterday": "INVALID_TIME", "since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z": "INVALID_TIME",
		"cursor=a&before=b": "INVALID_CURSOR",
	} {
		status, resp := ts.do(t, http.MethodGet, "/api/admin/events?"+query, o.Key, "")
		require.Equal(t, http.StatusBadRequest, status, resp)
		require.Contains(t, resp, `"`+code+`"`)
	}
	var list struct {
		Data []map[string]any `json:"data"`
	}
	apiGet(t, ts, o.Key, "/api/admin/webhooks", &list)
	require.Empty(t, list.Data, "no refused create stored anything")

	id := createEndpointAPI(t, ts, o.Key, `{"url":"http://127.0.0.1:9/s","event_types":["booking.*"],"timeout_seconds":2,"max_attempts":4}`)
	var ep map[string]any
	apiGet(t, ts, o.Key, "/api/admin/webhooks/"+id, &ep)
	require.EqualValues(t, 2, ep["timeout_seconds"])
	require.EqualValues(t, 4, ep["max_attempts"])
	require.Equal(t, "enabled", ep["state"])
	require.Contains(t, ep, "health")
	status, resp := ts.do(t, http.MethodPatch, "/api/admin/webhooks/"+id, o.Key, `{"max_attempts":30}`)
	require.Equal(t, http.StatusBadRequest, status, resp)
	require.Contains(t, resp, "INVALID_MAX_ATTEMPTS")

	failing := createEndpointAPI(t, ts, o.Key, `{"url":"http://127.0.0.1:9/f","event_types":["booking.*"]}`)
	_, err := ts.App.Pool.Exec(t.Context(), `UPDATE webhook_endpoints SET failing_since = now() WHERE id = $1`, failing)
	require.NoError(t, err)
	// The one disabled endpoint the state gauge counts below.
	createEndpointAPI(t, ts, o.Key, `{"url":"http://127.0.0.1:9/d","event_types":["booking.*"],"enabled":false}`)

	// Soft delete: readable, frozen, out of the default list, once.
	status, resp = ts.do(t, http.MethodDelete, "/api/admin/webhooks/"+id, o.Key, "")
	require.Equal(t, http.StatusNoContent, status, resp)
	status, resp = ts.do(t, http.MethodDelete, "/api/admin/webhooks/"+id, o.Key, "")
	require.Equal(t, http.StatusNotFound, status, resp)
	apiGet(t, ts, o.Key, "/api/admin/webhooks/"+id, &ep)
	require.Equal(t, "deleted", ep["state"])
	require.NotNil(t, ep["deleted_at"])
	status, resp = ts.do(t, http.MethodPatch, "/api/admin/webhooks/"+id, o.Key, `{"enabled":true}`)
	require.Equal(t, http.StatusConflict, status, resp)
	require.Contains(t, resp, "ENDPOINT_DELETED")
	status, resp = ts.do(t, http.MethodGet, "/api/admin/webhooks/"+id+"/deliveries", o.Key, "")
	require.Equal(t, http.StatusOK, status, resp)
	apiGet(t, ts, o.Key, "/api/admin/webhooks", &list)
	require.Len(t, list.Data, 2)
	apiGet(t, ts, o.Key, "/api/admin/webhooks?state=deleted", &list)
	require.Len(t, list.Data, 1)
	require.Equal(t, id, list.Data[0]["id"])

	// The operator's gauges, read from the database at scrape time.
	status, body := ts.do(t, http.MethodGet, "/metrics", ts.operatorKey(t), "")
	require.Equal(t, http.StatusOK, status)
	gauge := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(body)
		require.NotNil(t, m, "%s on /metrics", name)
		return m[1]
	}
	require.Equal(t, "1", gauge(`standmeet_webhook_state_up`))
	require.Equal(t, "1", gauge(`standmeet_webhook_endpoints{state="failing"}`))
	require.Equal(t, "1", gauge(`standmeet_webhook_endpoints{state="disabled"}`), "the deleted endpoint is not counted as disabled")
	for _, s := range []string{"waiting", "running", "retrying", "failed"} {
		gauge(`standmeet_webhook_deliveries{state="` + s + `"}`)
	}

	// The events list pages both ways over the owner's events (two tests
	// add to the key's).
	for range 2 {
		status, resp := ts.do(t, http.MethodPost, "/api/admin/webhooks/"+failing+"/test", o.Key, "")
		require.Equal(t, http.StatusAccepted, status, resp)
	}
	var page struct {
		Data []struct {
			ID         string    `json:"id"`
			OccurredAt time.Time `json:"occurred_at"`
		} `json:"data"`
		NextCursor *string `json:"next_cursor"`
		PrevCursor *string `json:"prev_cursor"`
	}
	apiGet(t, ts, o.Key, "/api/admin/events?limit=1", &page)
	require.Len(t, page.Data, 1)
	require.Nil(t, page.PrevCursor)
	require.NotNil(t, page.NextCursor, "the owner has three events")
	first := page.Data[0].ID
	apiGet(t, ts, o.Key, "/api/admin/events?limit=1&cursor="+*page.NextCursor, &page)
	require.NotEqual(t, first, page.Data[0].ID)
	require.NotNil(t, page.PrevCursor)
	apiGet(t, ts, o.Key, "/api/admin/events?limit=1&before="+*page.PrevCursor, &page)
	require.Equal(t, first, page.Data[0].ID)
	raw, err := json.Marshal(page)
	require.NoError(t, err)
	require.False(t, strings.Contains(string(raw), `"prev_cursor":"`), "back at the newest page")
}

// TestWebhookPrunePurgesEndpointsDeletedBeforeTheRetention: the retention
// job the server registers purges an endpoint deleted longer ago than the
// retention, with its delivery log, and keeps one deleted since.
func TestWebhookPrunePurgesEndpointsDeletedBeforeTheRetention(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.0/8"}})
	o := newSurfaceOwner(t, ts)
	old := createEndpointAPI(t, ts, o.Key, `{"url":"http://127.0.0.1:9/old","event_types":["booking.*"]}`)
	recent := createEndpointAPI(t, ts, o.Key, `{"url":"http://127.0.0.1:9/recent","event_types":["booking.*"]}`)
	for _, id := range []string{old, recent} {
		status, resp := ts.do(t, http.MethodDelete, "/api/admin/webhooks/"+id, o.Key, "")
		require.Equal(t, http.StatusNoContent, status, resp)
	}
	_, err := ts.App.Pool.Exec(t.Context(), `UPDATE webhook_endpoints SET deleted_at = now() - interval '2 hours' WHERE id = $1`, old)
	require.NoError(t, err)

	store, err := webhookdb.NewStore(ts.App.Pool, nil)
	require.NoError(t, err)
	t.Cleanup(store.Close)
	w := provideWebhookPruneWorker(store, ts.App.Pool)
	require.NoError(t, w.Work(t.Context(), &river.Job[riverjob.WebhookPruneArgs]{Args: riverjob.WebhookPruneArgs{Retention: time.Hour}}))
	status, resp := ts.do(t, http.MethodGet, "/api/admin/webhooks/"+old, o.Key, "")
	require.Equal(t, http.StatusNotFound, status, resp)
	status, resp = ts.do(t, http.MethodGet, "/api/admin/webhooks/"+recent, o.Key, "")
	require.Equal(t, http.StatusOK, status, resp)
}
