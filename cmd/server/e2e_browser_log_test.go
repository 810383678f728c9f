package main

// The delivery log in a real browser: recover past events, watch the log
// refresh itself, retry a failed delivery now, read an attempt's answer and
// the body that was sent, and filter (see e2e_browser_test.go for the
// browser and how it is found).

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestDeliveryLogInABrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	o := newSurfaceOwner(t, ts)
	var failing atomic.Bool
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "upstream broke: trace-7f3a")
			return
		}
		fmt.Fprint(w, "ok-received")
	})
	hook := createEndpointAPI(t, ts, o.Key, `{"url":"`+rc.URL+`/hook","event_types":["code.*","webhook.test"],"enabled":false}`)

	// Two events while the endpoint is disabled.
	since := time.Now().UTC().Add(-time.Minute).Truncate(time.Minute)
	evs := []uuid.UUID{
		recordEvent(t, ts, o.ID, "code.issued", "code:1", map[string]any{}),
		recordEvent(t, ts, o.ID, "code.issued", "code:2", map[string]any{}),
	}
	waitFannedOut(t, ts, evs...)
	status, body := ts.do(t, http.MethodPatch, "/api/admin/webhooks/"+hook, o.Key, `{"enabled":true}`)
	require.Equal(t, http.StatusOK, status, body)

	b.do(chromedp.Navigate(ts.URL + "/admin/webhooks/" + hook))
	b.login(ts, o)
	b.do(chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	require.Contains(t, b.innerText("#deliveries"), "No deliveries yet")

	// Recover them: the log fills in by itself.
	b.do(
		chromedp.Click(chromedp.CSS("#recover summary")),
		chromedp.WaitVisible(chromedp.CSS("#recover-since")),
		setValue("#recover-since", since.Format("2006-01-02T15:04")),
		chromedp.Click(chromedp.CSS("#recover-submit")),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
	)
	require.Contains(t, b.innerText(".notice"), "2 events in the range: 2 new deliveries queued")
	b.waitFor(`document.querySelectorAll('tr.delivery[data-status="delivered"]').length === 2`, 60*time.Second)
	require.Equal(t, 2, rc.count())
	b.snap("delivery-log-recovered")

	// A failing test delivery waits for its retry; retry it now once the
	// receiver is fixed. It is retried once by River first (5 s), after
	// which the next retry is 5 minutes away: no race with the click.
	failing.Store(true)
	b.do(chromedp.Click(chromedp.CSS(`form[action$="/test"] button`)))
	b.waitFor(`location.search.includes("notice=test_sent")`, 15*time.Second)
	row := `tr.delivery[data-status="retrying"][data-attempt="2"]`
	b.waitFor(`document.querySelector('`+row+`') !== null`, 60*time.Second)
	job := value(b, chromedp.Evaluate[string](`document.querySelector('`+row+`').getAttribute("data-job")`))
	require.Contains(t, b.innerText(row), "500")
	b.snap("delivery-log-retrying")
	failing.Store(false)
	b.do(chromedp.Click(chromedp.CSS(row + " button.retry-now")))
	b.waitFor(`location.search.includes("notice=retried")`, 15*time.Second)
	b.do(chromedp.WaitVisible(chromedp.CSS(".notice")))
	require.Contains(t, b.innerText(".notice"), "Delivery "+job+" runs now")
	delivered := `tr.delivery[data-job="` + job + `"][data-status="delivered"]`
	b.waitFor(`document.querySelector('`+delivered+`') !== null`, 60*time.Second)
	cells := b.innerText(delivered)
	require.Contains(t, cells, "200")
	require.NotContains(t, cells, "500", "the delivered row keeps no old error")

	// The delivery's page: both attempts, the receiver's answers, the body sent.
	b.do(
		chromedp.Click(chromedp.CSS(delivered+" a.delivery-link")),
		chromedp.WaitVisible(chromedp.CSS("#attempts")),
	)
	attempts := value(b, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("tr.attempt")).map(r => r.innerText)`))
	require.Len(t, attempts, 3)
	require.Contains(t, attempts[0], "upstream broke: trace-7f3a")
	require.Contains(t, attempts[1], "upstream broke: trace-7f3a")
	require.Contains(t, attempts[2], "ok-received")
	// Each attempt's outcome in words, not River's.
	require.Contains(t, attempts[0], "failed, to be retried")
	require.NotContains(t, attempts[0], "retryable")
	require.Contains(t, attempts[2], "delivered")
	require.NotContains(t, attempts[2], "completed")
	sentBody := b.innerText("#sent-body")
	reqs := rc.requests()
	require.Equal(t, string(reqs[len(reqs)-1].Body), strings.TrimSpace(sentBody), "the page shows the exact body sent")
	require.Contains(t, b.innerText("#sent-headers"), "Webhook-Id: ")
	// Each attempt shows the headers it sent: its own timestamp and
	// signature, exactly as the receiver got them, never the secret.
	sentHeaders := value(b, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("tr.attempt pre.attempt-headers")).map(p => p.innerText)`))
	require.Len(t, sentHeaders, 3)
	var tried []received
	for _, r := range reqs {
		if r.Header.Get("webhook-id") == reqs[len(reqs)-1].Header.Get("webhook-id") {
			tried = append(tried, r)
		}
	}
	require.Len(t, tried, 3)
	for i, h := range sentHeaders {
		require.Contains(t, h, "Webhook-Signature: "+tried[i].Header.Get("webhook-signature"), "attempt %d", i+1)
		require.Contains(t, h, "Webhook-Timestamp: "+tried[i].Header.Get("webhook-timestamp"), "attempt %d", i+1)
		require.Contains(t, h, "Webhook-Id: "+tried[i].Header.Get("webhook-id"), "attempt %d", i+1)
		require.NotContains(t, h, "whsec_", "never the secret")
	}
	require.Empty(t, b.unlabelled())
	b.snap("delivery-page")

	// Filters: by type, by state, and a refused state.
	b.do(chromedp.Navigate(ts.URL+"/admin/webhooks/"+hook), chromedp.WaitVisible(chromedp.CSS("#delivery-filter")))
	require.Empty(t, b.unlabelled(), "the filter form labels every field")
	b.do(
		setValue("#filter-type", "code.issued"),
		chromedp.Click(chromedp.CSS("#filter-submit")),
	)
	b.waitFor(`location.search.includes("event_type=code.issued")`, 15*time.Second)
	b.do(chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	require.Len(t, b.rowIDs("data-job"), 2)
	b.do(
		setValue("#filter-type", ""),
		setValue("#filter-state", "failed"),
		chromedp.Click(chromedp.CSS("#filter-submit")),
	)
	b.waitFor(`location.search.includes("state=failed")`, 15*time.Second)
	b.do(chromedp.WaitVisible(chromedp.CSS("#deliveries")))
	require.Empty(t, b.rowIDs("data-job"))
	require.Contains(t, b.innerText("#deliveries"), "No delivery matches the filter")
	status, body = ts.do(t, http.MethodGet, "/api/admin/webhooks/"+hook+"/deliveries?state=bogus", o.Key, "")
	require.Equal(t, http.StatusBadRequest, status, body)
	b.do(chromedp.Navigate(ts.URL+"/admin/webhooks/"+hook+"?state=bogus"), chromedp.WaitVisible(chromedp.CSS("main")))
	require.Contains(t, b.html(), "INVALID_STATE")
}
