package main

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// chartSum is the sum of a chart's bars of one series, read from the SVG.
func (b *browser) chartSum(chartID, series string) int {
	b.t.Helper()
	return value(b, chromedp.Evaluate[int](`Array.from(document.querySelectorAll('#`+chartID+` rect[data-series="`+series+`"]'))
  .reduce((n, r) => n + Number(r.getAttribute("data-value")), 0)`))
}

// chartTotal is a chart legend's total of one series.
func (b *browser) chartTotal(chartID, series string) string {
	b.t.Helper()
	return value(b, chromedp.Evaluate[string](`(document.querySelector('#`+chartID+` [data-total="`+series+`"]') || {}).textContent || ""`))
}

// TestHealthOverviewInABrowser: after a run of deliveries that succeed and
// fail, the overview's charts carry the attempts' figures (in the SVG, its
// legend and its table), the endpoint's and the source's pages have their
// own charts, and the banner appears for an endpoint failing for an hour
// and leaves when it recovers.
func TestHealthOverviewInABrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1000)})
	o := newSurfaceOwner(t, ts)
	ok := newReceiver(t, nil)
	var healthy atomic.Bool
	flaky := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		if healthy.Load() {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	})
	good := createEndpoint(t, ts, o.Key, map[string]any{"url": ok.URL + "/good", "event_types": []string{"code.*"}})
	bad := createEndpoint(t, ts, o.Key, map[string]any{"url": flaky.URL + "/bad", "event_types": []string{"code.*"}, "max_attempts": 2})
	for range 3 {
		e, _ := sendTest(t, ts, o.Key, good.ID)
		waitDelivery(t, ts, o.Key, good.ID, e, "completed")
	}
	e, _ := sendTest(t, ts, o.Key, bad.ID)
	waitDelivery(t, ts, o.Key, bad.ID, e, "cancelled", "discarded")
	src := createInboundSource(t, ts, o.Key, "")
	_, err := ts.App.Pool.Exec(t.Context(), `INSERT INTO inbound_messages
		(id, owner_id, source_id, message_id, message_id_signed, payload_sha256, body, received_at, state, attempts, last_error, dead_at)
		VALUES ($1, $2, $3, 'dead-1', true, sha256('{}'::bytea), '{}'::bytea, now(), 'dead', 5, 'gave up', now())`,
		uuid.Must(uuid.NewV7()), o.ID, src.ID)
	require.NoError(t, err)

	// Sign-in lands on the overview.
	b.do(chromedp.Navigate(ts.URL + "/admin"))
	b.login(ts, o)
	b.do(chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	require.Equal(t, ts.URL+"/admin", b.location())
	b.snap("overview")
	require.Equal(t, 3, b.chartSum("deliveries", "succeeded"))
	require.Equal(t, 1, b.chartSum("deliveries", "retrying"))
	require.Equal(t, 1, b.chartSum("deliveries", "gave_up"))
	require.Equal(t, "3", b.chartTotal("deliveries", "succeeded"))
	require.Equal(t, "60.0%", value(b, chromedp.Evaluate[string](`document.querySelector("#success-rate").textContent`)))
	require.Equal(t, 24, value(b, chromedp.Evaluate[int](`document.querySelectorAll("#deliveries table.figures tbody tr").length`)), "a day of hourly buckets")
	require.NotEmpty(t, value(b, chromedp.Evaluate[string](`document.querySelector('#latency polyline[data-series="p50"]').getAttribute("data-values")`)))
	require.Equal(t, 1, b.chartSum("inbound", "dead"))
	require.Equal(t, bad.ID.String(), value(b, chromedp.Evaluate[string](`document.querySelector(".attention-endpoint").getAttribute("data-endpoint")`)))
	require.Equal(t, "1", value(b, chromedp.Evaluate[string](`document.querySelector(".attention-source .waiting").textContent`)))
	require.False(t, value(b, chromedp.Evaluate[bool](`document.querySelector("#health-banner") !== null`)), "failing for less than an hour: no banner")
	require.True(t, b.fitsWidth())
	b.do(chromedp.EmulateViewport(390, 844), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	require.True(t, b.fitsWidth(), "the overview scrolls sideways at 390 px")
	b.do(desktopViewport(), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#deliveries")))

	// Another window: twelve 5-minute buckets, the same attempts.
	b.do(chromedp.Click(chromedp.CSS(`.windows a[href="/admin?window=hour"]`)), chromedp.WaitVisible(chromedp.CSS(`.windows a[aria-current][href="/admin?window=hour"]`)))
	require.Equal(t, 12, value(b, chromedp.Evaluate[int](`document.querySelectorAll("#deliveries table.figures tbody tr").length`)))
	require.Equal(t, 3, b.chartSum("deliveries", "succeeded"))

	// The endpoint's page has its own charts, with its attempts only.
	b.do(chromedp.Navigate(ts.URL+"/admin/webhooks/"+good.ID.String()), chromedp.WaitVisible(chromedp.CSS("#endpoint-deliveries")))
	b.snap("endpoint charts")
	require.Equal(t, 3, b.chartSum("endpoint-deliveries", "succeeded"))
	require.Equal(t, 0, b.chartSum("endpoint-deliveries", "retrying"))
	require.Equal(t, "100.0%", value(b, chromedp.Evaluate[string](`document.querySelector("#success-rate").textContent`)))
	// And the source's page.
	b.do(chromedp.Navigate(ts.URL+"/admin/inbound/"+src.ID), chromedp.WaitVisible(chromedp.CSS("#source-inbound")))
	require.Equal(t, 1, b.chartSum("source-inbound", "dead"))

	// Failing for an hour: the banner is on every page.
	dbExec(t, ts, `UPDATE webhook_endpoints SET failing_since = now() - interval '2 hours' WHERE id = $1`, bad.ID)
	for _, page := range []string{"/admin", "/admin/webhooks", "/admin/events"} {
		b.do(chromedp.Navigate(ts.URL+page), chromedp.WaitVisible(chromedp.CSS("#health-banner")))
		require.Contains(t, value(b, chromedp.Evaluate[string](`document.querySelector("#health-banner").textContent`)), flaky.URL+"/bad", page)
	}
	b.snap("banner")

	// It recovers: the banner leaves.
	healthy.Store(true)
	e, _ = sendTest(t, ts, o.Key, bad.ID)
	waitDelivery(t, ts, o.Key, bad.ID, e, "completed")
	b.do(chromedp.Navigate(ts.URL+"/admin/webhooks"), chromedp.WaitVisible(chromedp.CSS("#endpoints")))
	require.False(t, value(b, chromedp.Evaluate[bool](`document.querySelector("#health-banner") !== null`)), "recovered: no banner")
	b.do(chromedp.Navigate(ts.URL+"/admin"), chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	require.Equal(t, 0, value(b, chromedp.Evaluate[int](`document.querySelectorAll(".attention-endpoint").length`)))
	require.Equal(t, 4, b.chartSum("deliveries", "succeeded"))
}
