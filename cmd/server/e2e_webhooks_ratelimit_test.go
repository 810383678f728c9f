package main

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWebhookRateLimitThroughTheAPIAndTheForms: the limit is set, shown,
// changed and removed through REST and the endpoint forms; a value out of
// range is INVALID_RATE_LIMIT naming its field and changes nothing.
func TestWebhookRateLimitThroughTheAPIAndTheForms(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	o := ts.newOwnerAccount(t)
	rc := newReceiver(t, nil)
	ep := createEndpoint(t, ts, o.Key, map[string]any{"url": rc.URL, "event_types": []string{"corpus.*"}, "rate_limit_per_second": 5})
	var got struct {
		Rate  *int `json:"rate_limit_per_second"`
		Burst *int `json:"rate_limit_burst"`
	}
	apiGet(t, ts, o.Key, "/api/admin/webhooks/"+ep.ID.String(), &got)
	require.Equal(t, 5, *got.Rate)
	require.Equal(t, 5, *got.Burst, "the burst defaults to the rate")

	for _, bad := range []struct{ body, field string }{
		{`{"rate_limit_per_second":1001}`, "rate_limit_per_second"},
		{`{"rate_limit_burst":0}`, "rate_limit_burst"},
	} {
		status, body := ts.do(t, http.MethodPatch, "/api/admin/webhooks/"+ep.ID.String(), o.Key, bad.body)
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Contains(t, body, `"INVALID_RATE_LIMIT"`)
		require.Contains(t, body, `"field":"`+bad.field+`"`)
	}
	apiGet(t, ts, o.Key, "/api/admin/webhooks/"+ep.ID.String(), &got)
	require.Equal(t, 5, *got.Rate, "a refused change changes nothing")

	ui := signIn(t, ts, o)
	status, body, _ := ui.get(t, "/admin/webhooks/"+ep.ID.String())
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "at most 5 a second (burst 5)")
	status, body, _ = ui.get(t, "/admin/webhooks/"+ep.ID.String()+"/edit")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `name="rate_limit_per_second" type="number" min="1" max="1000" placeholder="none" value="5"`)
	form := url.Values{"url": {rc.URL}, "globs": {"corpus.*"}, "enabled": {"on"}, "max_in_flight": {"1"}, "timeout_seconds": {"10"},
		"max_attempts": {"18"}, "rate_limit_per_second": {"2"}, "rate_limit_burst": {"4"}}
	status, body, _ = ui.post(t, "/admin/webhooks/"+ep.ID.String()+"/edit", form)
	require.Equal(t, http.StatusSeeOther, status, body)
	apiGet(t, ts, o.Key, "/api/admin/webhooks/"+ep.ID.String(), &got)
	require.Equal(t, []int{2, 4}, []int{*got.Rate, *got.Burst})
	form.Set("rate_limit_per_second", "x")
	status, body, _ = ui.post(t, "/admin/webhooks/"+ep.ID.String()+"/edit", form)
	require.Equal(t, http.StatusBadRequest, status)
	require.True(t, strings.Contains(body, "rate_limit_per_second must be a whole number"), body)
	form.Set("rate_limit_per_second", "")
	form.Set("rate_limit_burst", "")
	status, body, _ = ui.post(t, "/admin/webhooks/"+ep.ID.String()+"/edit", form)
	require.Equal(t, http.StatusSeeOther, status, body)
	apiGet(t, ts, o.Key, "/api/admin/webhooks/"+ep.ID.String(), &got)
	require.Nil(t, got.Rate, "cleared in the form, the limit is removed")
}
