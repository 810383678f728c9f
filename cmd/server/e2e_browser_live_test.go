package main

// The live delivery log in a real browser: a page open on an endpoint with
// a delivery in flight shows a delivery of an event published afterwards,
// without being reloaded.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestLiveLogShowsANewDeliveryWithoutAReload(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	o := newSurfaceOwner(t, ts)
	// Every answer is a 500: the first delivery keeps retrying, so the log
	// stays in flight.
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	hook := uuid.MustParse(createEndpointAPI(t, ts, o.Key, `{"url":"`+rc.URL+`/hook","event_types":["booking.*"]}`))
	publish := func(booking string) uuid.UUID {
		status, body := ts.do(t, http.MethodPost, "/api/admin/events", o.Key, publishBody(booking, ""))
		require.Equal(t, http.StatusAccepted, status, body)
		var out publishOut
		require.NoError(t, json.Unmarshal([]byte(body), &out))
		return out.ID
	}
	first := waitDelivery(t, ts, o.Key, hook, publish("b_live_1"), "retryable", "scheduled")

	b.do(chromedp.Navigate(ts.URL + "/admin/webhooks/" + hook.String()))
	b.login(ts, o)
	b.do(chromedp.WaitVisible(chromedp.CSS(`tr.delivery[data-job="` + strconv.FormatInt(first.JobID, 10) + `"]`)))
	require.True(t, value(b, chromedp.Evaluate[bool](`document.querySelector("section#deliveries").hasAttribute("data-refresh")`)),
		"a retrying delivery keeps the log live")
	require.Len(t, b.rowIDs("data-job"), 1)
	// A mark a reload would wipe out.
	b.do(chromedp.Evaluate[chromedp.Void](`window.__marker = 1`))

	second := waitDelivery(t, ts, o.Key, hook, publish("b_live_2"),
		"pending", "available", "scheduled", "running", "retryable", "completed", "discarded", "cancelled")
	b.waitFor(`document.querySelector('tr.delivery[data-job="`+strconv.FormatInt(second.JobID, 10)+`"]') !== null`, 20*time.Second)
	require.Equal(t, 1, value(b, chromedp.Evaluate[int](`window.__marker || 0`)), "the page was reloaded")
	require.Len(t, b.rowIDs("data-job"), 2)
	b.snap("delivery-log-live")
}
