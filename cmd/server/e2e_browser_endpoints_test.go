package main

// The endpoint settings, edit form, soft delete, filtered endpoint list and
// events view, driven in a real browser (see e2e_browser_test.go for the
// browser and how it is found).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// createEndpointAPI creates an endpoint with the owner's key and returns
// its id.
func createEndpointAPI(t *testing.T, ts *testServer, key, body string) string {
	t.Helper()
	status, resp := ts.do(t, http.MethodPost, "/api/admin/webhooks", key, body)
	require.Equal(t, http.StatusCreated, status, resp)
	var out struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp), &out))
	return out.ID
}

// setValue sets a form control's value by script (chromedp's SetValue
// refuses an empty value), firing the input and change events.
func setValue(sel, v string) chromedp.Action[chromedp.Void] {
	js, err := json.Marshal(map[string]string{"sel": sel, "v": v})
	if err != nil {
		panic(err)
	}
	eval := chromedp.Evaluate[bool](`(() => { const a = ` + string(js) + `; const e = document.querySelector(a.sel);
  if (!e) return false; e.value = a.v; e.dispatchEvent(new Event("input", {bubbles: true}));
  e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		ok, err := eval(ctx, t)
		if err == nil && !ok {
			err = fmt.Errorf("no %s on the page", sel)
		}
		return chromedp.Void{}, err
	}
}

// rowIDs lists the data-endpoint ids of the endpoint list's rows.
func (b *browser) rowIDs(attr string) []string {
	return value(b, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("tr[`+attr+`]")).map(r => r.getAttribute("`+attr+`"))`))
}

func TestEndpointEditDeleteListAndEventsInABrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.0/8"}})
	o := newSurfaceOwner(t, ts)
	sink := newHookSink(t)

	hook := createEndpointAPI(t, ts, o.Key, `{"url":"`+sink.URL+`/first","event_types":["booking.*"],"description":"to edit"}`)
	// Never sent anything: it subscribes to no type this test records.
	quiet := createEndpointAPI(t, ts, o.Key, `{"url":"http://127.0.0.1:9/quiet","event_types":["booking.*"]}`)
	status, body := ts.do(t, http.MethodPatch, "/api/admin/webhooks/"+quiet, o.Key, `{"enabled":false}`)
	require.Equal(t, http.StatusOK, status, body)

	b.do(chromedp.Navigate(ts.URL + "/admin/webhooks"))
	b.login(ts, o)
	b.do(chromedp.WaitVisible(chromedp.CSS("#endpoints")))

	// Edit every field of the first endpoint in the form.
	b.do(
		chromedp.Navigate(ts.URL+"/admin/webhooks/"+hook),
		chromedp.WaitVisible(chromedp.CSS(`a[href$="/edit"]`)),
		chromedp.Click(chromedp.CSS(`a[href$="/edit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#edit-endpoint")),
	)
	require.Empty(t, b.unlabelled(), "the edit form labels every field")
	require.Equal(t, sink.URL+"/first", b.inputValue("#url"), "the form starts from the endpoint")
	require.Equal(t, "booking.*", b.inputValue("#globs"))
	b.snap("endpoint-edit")
	b.do(
		setValue("#url", sink.URL+"/edited"),
		setValue("#description", "edited in the browser"),
		setValue("#globs", ""),
		chromedp.Click(chromedp.CSS(`input[name="event_types"][value="webhook.test"]`)),
		chromedp.SendKeys(chromedp.CSS("#headers"), "X-Edited: yes"),
		setValue("#max_in_flight", "2"),
		setValue("#timeout_seconds", "3"),
		setValue("#max_attempts", "5"),
		chromedp.Click(chromedp.CSS(`#edit-endpoint button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
	)
	require.Contains(t, b.innerText(".notice"), "Endpoint updated")
	require.Contains(t, b.innerText("#endpoint-settings"), "2 in flight, 3 s timeout, 5 attempts")
	var ep struct {
		URL            string            `json:"url"`
		Description    string            `json:"description"`
		EventTypes     []string          `json:"event_types"`
		Headers        map[string]string `json:"headers"`
		MaxInFlight    int               `json:"max_in_flight"`
		TimeoutSeconds int               `json:"timeout_seconds"`
		MaxAttempts    int               `json:"max_attempts"`
		State          string            `json:"state"`
	}
	apiGet(t, ts, o.Key, "/api/admin/webhooks/"+hook, &ep)
	require.Equal(t, sink.URL+"/edited", ep.URL)
	require.Equal(t, "edited in the browser", ep.Description)
	require.Equal(t, []string{"webhook.test"}, ep.EventTypes)
	require.Contains(t, ep.Headers, "X-Edited")
	require.Equal(t, []int{2, 3, 5}, []int{ep.MaxInFlight, ep.TimeoutSeconds, ep.MaxAttempts})

	// The edited endpoint is what gets delivered to: its new URL, its new header.
	b.do(
		chromedp.Click(chromedp.CSS(`form[action$="/test"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
	)
	b.waitFor(`document.querySelector('tr.delivery[data-state="completed"]') !== null`, 60*time.Second)
	got := sink.all()
	require.Len(t, got, 1)
	require.Equal(t, "yes", got[0].Header.Get("X-Edited"))

	// The list: filters and order, each endpoint with its health.
	b.do(chromedp.Navigate(ts.URL+"/admin/webhooks"), chromedp.WaitVisible(chromedp.CSS("#endpoints")))
	require.Equal(t, []string{quiet, hook}, b.rowIDs("data-endpoint"), "newest first")
	require.Empty(t, b.unlabelled(), "the filter form labels every field")
	require.Contains(t, b.innerText(`tr[data-endpoint="`+hook+`"] .rate`), "100.0% of 1")
	b.snap("endpoint-list")
	b.do(
		setValue("#f-state", "disabled"),
		chromedp.Click(chromedp.CSS(`#endpoint-filters button[type=submit]`)),
	)
	b.waitFor(`location.search.includes("state=disabled")`, 15*time.Second)
	b.do(chromedp.WaitVisible(chromedp.CSS("#endpoints")))
	require.Equal(t, []string{quiet}, b.rowIDs("data-endpoint"))
	b.do(
		setValue("#f-state", ""),
		setValue("#f-type", "webhook.test"),
		chromedp.Click(chromedp.CSS(`#endpoint-filters button[type=submit]`)),
	)
	b.waitFor(`location.search.includes("event_type=webhook.test")`, 15*time.Second)
	b.do(chromedp.WaitVisible(chromedp.CSS("#endpoints")))
	require.Equal(t, []string{hook}, b.rowIDs("data-endpoint"))
	b.do(
		setValue("#f-type", ""),
		setValue("#f-url", "QUIET"),
		chromedp.Click(chromedp.CSS(`#endpoint-filters button[type=submit]`)),
	)
	b.waitFor(`location.search.includes("url=QUIET")`, 15*time.Second)
	b.do(chromedp.WaitVisible(chromedp.CSS("#endpoints")))
	require.Equal(t, []string{quiet}, b.rowIDs("data-endpoint"))
	// Sorted by URL, descending: http://127… sorts before http://127… of
	// the sink only by the rest, so compare with the API's order.
	b.do(chromedp.Navigate(ts.URL+"/admin/webhooks?sort=-url"), chromedp.WaitVisible(chromedp.CSS("#endpoints")))
	var byURL struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	apiGet(t, ts, o.Key, "/api/admin/webhooks?sort=-url", &byURL)
	require.Len(t, byURL.Data, 2)
	require.Equal(t, []string{byURL.Data[0].ID, byURL.Data[1].ID}, b.rowIDs("data-endpoint"))

	// Soft delete: gone from the list, kept under "deleted" with its log.
	b.do(
		chromedp.Navigate(ts.URL+"/admin/webhooks/"+hook+"/delete"),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/delete"] button`)),
		chromedp.Click(chromedp.CSS(`form[action$="/delete"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".notice")),
	)
	require.Contains(t, b.innerText(".notice"), "Endpoint deleted")
	require.Equal(t, []string{quiet}, b.rowIDs("data-endpoint"), "the default list leaves the deleted endpoint out")
	b.do(chromedp.Navigate(ts.URL+"/admin/webhooks?state=deleted"), chromedp.WaitVisible(chromedp.CSS("#endpoints")))
	require.Equal(t, []string{hook}, b.rowIDs("data-endpoint"))
	require.Contains(t, b.innerText(`tr[data-endpoint="`+hook+`"]`), "Deleted")
	b.do(
		chromedp.Click(chromedp.CSS(`tr[data-endpoint="`+hook+`"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#deleted-note")),
	)
	b.snap("endpoint-deleted")
	require.Contains(t, b.innerText("tr.delivery"), "204", "the delivery log stays readable")
	require.NotContains(t, b.html(), `action="/admin/webhooks/`+hook+`/test"`, "a deleted endpoint offers no action")
	status, body = ts.do(t, http.MethodPost, "/api/admin/webhooks/"+hook+"/test", o.Key, "")
	require.Equal(t, http.StatusConflict, status, body)
	require.Contains(t, body, "ENDPOINT_DELETED")

	// The events view: the test event, filtered by type, links to its
	// delivery, which links back to the (deleted) endpoint.
	b.do(chromedp.Navigate(ts.URL+"/admin/events"), chromedp.WaitVisible(chromedp.CSS("#events")))
	require.Empty(t, b.unlabelled(), "the events filter labels every field")
	require.Greater(t, len(b.rowIDs("data-event")), 1, "the owner's other events (sign-in, key) are listed too")
	b.do(
		setValue("#f-type", "webhook.test"),
		chromedp.Click(chromedp.CSS(`#event-filters button[type=submit]`)),
	)
	b.waitFor(`location.search.includes("type=webhook.test")`, 15*time.Second)
	b.do(chromedp.WaitVisible(chromedp.CSS("#events")))
	events := b.rowIDs("data-event")
	require.Len(t, events, 1)
	b.snap("events")
	b.do(
		chromedp.Click(chromedp.CSS(`tr[data-event] a`)),
		chromedp.WaitVisible(chromedp.CSS("#event-deliveries")),
	)
	require.True(t, strings.HasSuffix(b.location(), "/admin/events/"+events[0]))
	row := b.innerText("#event-deliveries tr.delivery")
	require.Contains(t, row, sink.URL+"/edited")
	require.Contains(t, row, "deleted")
	require.Contains(t, row, "204")
	b.snap("event")
	// A time range that ends before the event shows none of it.
	b.do(chromedp.Navigate(ts.URL+"/admin/events?type=webhook.test&until=2000-01-01T00:00"), chromedp.WaitVisible(chromedp.CSS(".empty")))
	require.Empty(t, b.rowIDs("data-event"))
}
