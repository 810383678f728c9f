package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestEventCatalogInABrowser: the catalog page, reached from the
// navigation, lists every type with its producer and opens a type's schema
// and example; it fits a phone's width.
func TestEventCatalogInABrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	ts := startTestServer(t, testServerOptions{})
	o := newSurfaceOwner(t, ts)
	b.do(chromedp.Navigate(ts.URL + "/admin/webhooks"))
	b.waitFor(`document.querySelector("#email") !== null`, 15*time.Second)
	b.login(ts, o)
	b.do(
		chromedp.WaitVisible(chromedp.CSS(`nav a[href="/admin/event-types"]`)),
		chromedp.Click(chromedp.CSS(`nav a[href="/admin/event-types"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#event-catalog`)),
	)
	require.Equal(t, ts.URL+"/admin/event-types", b.location())
	b.waitFor(`document.querySelectorAll("#event-catalog tbody tr").length === `+strconv.Itoa(webhookTypesDeclared()), 10*time.Second)
	require.Contains(t, b.innerText(`tr[data-type="booking.created"]`), "your services")
	require.Contains(t, b.innerText(`tr[data-type="owner.login"]`), "this server")
	require.NotContains(t, b.innerText(`tr[data-type="owner.login"]`), "owner.Service", "producers in words, not code")
	b.do(
		chromedp.Click(chromedp.CSS(`tr[data-type="booking.created"] a`)),
		chromedp.Click(chromedp.CSS(`#type-booking\.created details:nth-of-type(2) summary`)),
		chromedp.WaitVisible(chromedp.CSS(`pre[data-example="booking.created"]`)),
	)
	require.Contains(t, b.innerText(`pre[data-example="booking.created"]`), `"booking_id": "b_41"`)
	b.snap("event-catalog")
	require.True(t, b.fitsWidth(), "the catalog fits the viewport")
}
