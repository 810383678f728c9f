package main

// An owner's day in a real browser, from before the instance has an owner:
// the sign-in page says how to create one and links the way back in; the
// API keys page issues a scoped key and shows its scopes; recover on one
// endpoint says what it queued and what it skipped, and why; redeliver and
// disable ask first, and cancelling their question changes nothing; Tasks
// is not offered to an owner who is not the operator.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestAnOwnersDayInABrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})

	// No owner yet: the sign-in page says how to create one, and links the
	// page that says how a locked-out owner gets back in.
	b.do(chromedp.Navigate(ts.URL+"/admin/login"), chromedp.WaitVisible(chromedp.CSS("#email")))
	login := b.text("main")
	require.Contains(t, login, "This instance has no owner yet")
	require.Contains(t, login, "standmeet owner create --email")
	b.snap("login-no-owner")
	b.do(chromedp.Click(chromedp.CSS(`a[href="/admin/forgot"]`)))
	b.waitFor(`location.pathname === "/admin/forgot"`, 15*time.Second)
	require.Contains(t, b.text("main"), "standmeet owner reset-password --email you@example.com")
	b.snap("forgot")
	o := newSurfaceOwner(t, ts)
	b.do(chromedp.Navigate(ts.URL+"/admin/login"), chromedp.WaitVisible(chromedp.CSS("#email")))
	require.NotContains(t, b.text("main"), "no owner yet")
	require.True(t, value(b, chromedp.Evaluate[bool](`document.querySelector('a[href="/admin/forgot"]') !== null`)), "the way back in stays linked")
	b.login(ts, o)
	b.waitFor(`document.querySelector('form[action="/admin/logout"]') !== null`, 15*time.Second)

	// Not the operator: no Tasks link, and /admin/tasks is the admin's own
	// not-found page, with the navigation.
	require.False(t, value(b, chromedp.Evaluate[bool](`document.querySelector('nav a[href="/admin/tasks"]') !== null`)), "Tasks is the operator's")
	b.do(chromedp.Navigate(ts.URL+"/admin/tasks"), chromedp.WaitVisible(chromedp.CSS("h1")))
	require.Equal(t, "Page not found", b.text("h1"))
	require.Contains(t, b.text("nav"), "Webhooks")

	// A publish-scoped key from the keys page: it publishes, it cannot
	// read the endpoints, and the list shows its scope.
	b.do(chromedp.Navigate(ts.URL+"/admin/api-keys"), chromedp.WaitVisible(chromedp.CSS("#scopes")))
	b.do(
		chromedp.SendKeys(chromedp.CSS("#name"), "publisher"),
		chromedp.Click(chromedp.CSS(`#scopes input[name="scopes"][value="publish"]`)),
		submit("/admin/api-keys"),
		chromedp.WaitVisible(chromedp.CSS("#secret")),
	)
	key := b.inputValue("#secret")
	status, body := ts.do(t, http.MethodPost, "/api/admin/events", key, publishBody("b_scoped", ""))
	require.Equal(t, http.StatusAccepted, status, body)
	status, body = ts.do(t, http.MethodGet, "/api/admin/webhooks", key, "")
	require.Equal(t, http.StatusForbidden, status, body)
	b.do(chromedp.Navigate(ts.URL+"/admin/api-keys"), chromedp.WaitVisible(chromedp.CSS("#keys")))
	scopes := value(b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#keys tr")].filter(r => r.innerText.includes("publisher")).map(r => r.querySelector("td.scopes").innerText)`))
	require.Equal(t, []string{"publish"}, scopes)
	require.Contains(t, b.text("#keys"), "Full access", "the unscoped key says so")
	b.snap("api-keys-scoped")

	// Recover on one endpoint: what it queued, and what it skipped and why.
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/reject") {
			w.WriteHeader(http.StatusBadRequest)
		}
	})
	kept := createEndpointAPI(t, ts, o.Key, `{"url":"`+rc.URL+`/kept","event_types":["code.*"],"filter":{"subject":"code:keep"},"enabled":false}`)
	since := time.Now().UTC().Add(-time.Minute).Truncate(time.Minute)
	evs := []uuid.UUID{
		recordEvent(t, ts, o.ID, "code.issued", "code:keep", map[string]any{}),
		recordEvent(t, ts, o.ID, "code.issued", "code:drop", map[string]any{}),
	}
	waitFannedOut(t, ts, evs...)
	status, body = ts.do(t, http.MethodPatch, "/api/admin/webhooks/"+kept, o.Key, `{"enabled":true}`)
	require.Equal(t, http.StatusOK, status, body)
	b.do(
		chromedp.Navigate(ts.URL+"/admin/webhooks/"+kept),
		chromedp.Click(chromedp.CSS("#recover summary")),
		chromedp.WaitVisible(chromedp.CSS("#recover-since")),
		setValue("#recover-since", since.Format("2006-01-02T15:04")),
		chromedp.Click(chromedp.CSS("#recover-submit")),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
	)
	notice := b.text(".notice")
	require.Contains(t, notice, "2 events in the range: 1 new deliveries queued")
	require.Contains(t, notice, "Skipped: 1 filtered out: the endpoint's payload filter refused the event.")
	b.snap("recovered-with-reasons")

	// Redeliver and disable ask first; cancelling changes nothing.
	rj := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) })
	rejecting := uuid.MustParse(createEndpointAPI(t, ts, o.Key, `{"url":"`+rj.URL+`/reject","event_types":["webhook.test"]}`))
	// A 4xx ends the delivery at once (River: cancelled).
	ev, _ := sendTest(t, ts, o.Key, rejecting)
	waitDelivery(t, ts, o.Key, rejecting, ev, "cancelled")
	page := ts.URL + "/admin/webhooks/" + rejecting.String()
	cancel := func(action string) {
		t.Helper()
		b.do(
			chromedp.Navigate(page),
			chromedp.WaitVisible(chromedp.CSS(`form[action$="`+action+`"] button`)),
			chromedp.Click(chromedp.CSS(`form[action$="`+action+`"] button`)),
			chromedp.WaitVisible(chromedp.CSS("#confirm")),
			chromedp.Click(chromedp.CSS("#confirm a.button")),
		)
		b.waitFor(`location.pathname === "/admin/webhooks/`+rejecting.String()+`" && location.search === ""`, 15*time.Second)
	}
	cancel("/redeliver")
	time.Sleep(500 * time.Millisecond)
	require.Equal(t, 1, waitDelivery(t, ts, o.Key, rejecting, ev, "cancelled").Attempt)
	require.Equal(t, 1, rj.count(), "a cancelled redeliver sends nothing")
	b.do(
		chromedp.Click(chromedp.CSS(`form[action$="/redeliver"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#confirm")),
	)
	require.Contains(t, b.text("#confirm"), "is queued again")
	b.do(chromedp.Click(chromedp.CSS("#confirm-button")), chromedp.WaitVisible(chromedp.CSS(".notice")))
	require.Contains(t, b.text(".notice"), "1 deliveries queued again")
	require.Eventually(t, func() bool { return rj.count() == 2 }, 30*time.Second, 20*time.Millisecond, "the confirmed redeliver sends again")

	cancel("/disable")
	require.True(t, getEndpoint(t, ts, o.Key, rejecting).Enabled, "a cancelled disable leaves the endpoint enabled")
	b.do(
		chromedp.Click(chromedp.CSS(`form[action$="/disable"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#confirm")),
	)
	b.confirmStep("Nothing is sent to it until it is enabled again")
	b.do(chromedp.WaitVisible(chromedp.CSS("#disabled-note")))
	require.False(t, getEndpoint(t, ts, o.Key, rejecting).Enabled)
}
