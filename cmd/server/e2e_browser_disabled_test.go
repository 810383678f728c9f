package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestDisabledEndpointHasAWayForwardInABrowser: a disabled endpoint's page
// offers no action that cannot succeed (send test, redeliver, recover,
// retry now) and says why, its waiting delivery says it is held; an action
// refused because the endpoint was disabled meanwhile renders inside the
// admin with an Enable button, which enables it and leads back.
func TestDisabledEndpointHasAWayForwardInABrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	o := newSurfaceOwner(t, ts)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, "down for maintenance")
	})
	hook := createEndpointAPI(t, ts, o.Key, `{"url":"`+rc.URL+`/hook","event_types":["webhook.test"]}`)
	page := ts.URL + "/admin/webhooks/" + hook
	patch := func(body string) {
		t.Helper()
		status, resp := ts.do(t, http.MethodPatch, "/api/admin/webhooks/"+hook, o.Key, body)
		require.Equal(t, http.StatusOK, status, resp)
	}

	b.do(chromedp.Navigate(page))
	b.login(ts, o)
	b.do(chromedp.WaitVisible(chromedp.CSS(`form[action$="/test"] button`)))
	// A failing test delivery waits for its retry (5 s, then 5 minutes).
	b.do(chromedp.Click(chromedp.CSS(`form[action$="/test"] button`)))
	b.waitFor(`location.search.includes("notice=test_sent")`, 15*time.Second)
	b.waitFor(`document.querySelector('tr.delivery[data-status="retrying"]') !== null`, 60*time.Second)

	// Disabled elsewhere: the endpoint's page offers nothing that cannot
	// succeed, and its waiting delivery says it is held.
	patch(`{"enabled":false}`)
	b.do(chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#disabled-note")))
	html := b.html()
	for _, gone := range []string{`action="/admin/webhooks/` + hook + `/test"`, `/redeliver"`, `id="recover"`, `class="retry-now"`} {
		require.NotContains(t, html, gone, "a disabled endpoint offers no %s", gone)
	}
	held := b.innerText(`tr.delivery[data-status="retrying"]`)
	require.Contains(t, held, "held: cancelled when due unless the endpoint is enabled first")
	require.Contains(t, held, "none while disabled")

	// A page loaded before the disable posts Send test: refused inside the
	// admin, with the way forward.
	value(b, chromedp.Evaluate[bool](`(() => {
		const f = document.createElement("form");
		f.method = "post";
		f.action = "/admin/webhooks/`+hook+`/test";
		const csrf = document.querySelector('input[name="csrf_token"]').cloneNode();
		f.appendChild(csrf);
		document.body.appendChild(f);
		f.submit();
		return true;
	})()`))
	b.do(chromedp.WaitVisible(chromedp.CSS("#way-forward button")))
	b.snap("disabled-conflict")
	require.Contains(t, b.innerText(".error"), "ENDPOINT_DISABLED")
	require.Contains(t, b.html(), `href="/admin/webhooks/`+hook+`"`, "the way back")
	require.Contains(t, b.html(), `<nav`, "inside the admin")

	// Enable fixes it and leads to the endpoint.
	b.do(chromedp.Click(chromedp.CSS("#way-forward button")))
	b.waitNotice("Endpoint enabled")
	require.Contains(t, b.location(), "/admin/webhooks/"+hook)
	b.do(chromedp.WaitVisible(chromedp.CSS(`form[action$="/test"] button`)))
	require.NotContains(t, b.html(), `id="disabled-note"`)
	var v struct {
		Enabled bool `json:"enabled"`
	}
	apiGet(t, ts, o.Key, "/api/admin/webhooks/"+hook, &v)
	require.True(t, v.Enabled)
}
