package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestEventsListShowsEachEventsOutcome: the events list says, per event, in
// an owner's words, where its deliveries stand (delivered, failing, no
// endpoint subscribed), each linked to the event's page; another owner's
// list shows none of it; webhooks.event_outcomes refuses a bad ids list.
func TestEventsListShowsEachEventsOutcome(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	a, b := ts.newOwnerAccount(t), ts.newOwnerAccount(t)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/bad") {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "ok")
	})
	good := uuid.MustParse(createEndpointAPI(t, ts, a.Key, `{"url":"`+rc.URL+`/good","event_types":["code.issued"]}`))
	bad := uuid.MustParse(createEndpointAPI(t, ts, a.Key, `{"url":"`+rc.URL+`/bad","event_types":["code.revoked"]}`))

	delivered := recordEvent(t, ts, a.ID, "code.issued", "code:1", map[string]any{})
	failing := recordEvent(t, ts, a.ID, "code.revoked", "code:2", map[string]any{})
	unsubscribed := recordEvent(t, ts, a.ID, "code.redeemed", "code:3", map[string]any{})
	waitDelivery(t, ts, a.Key, good, delivered, "completed")
	waitDelivery(t, ts, a.Key, bad, failing, "retryable", "scheduled")
	waitFannedOut(t, ts, unsubscribed)

	status, page, _ := signIn(t, ts, a).get(t, "/admin/events")
	require.Equal(t, http.StatusOK, status, page)
	for ev, want := range map[uuid.UUID][]string{
		delivered:    {`data-status="delivered"`, "delivered to 1"},
		failing:      {`data-status="retrying"`, "1 retrying"},
		unsubscribed: {`data-status="none"`, "no endpoint subscribed"},
	} {
		row := eventRow(t, page, ev)
		require.Contains(t, row, `href="/admin/events/`+ev.String()+`#event-deliveries"`, "the outcome links to the event")
		for _, w := range want {
			require.Contains(t, row, w, "event %s", ev)
		}
	}

	// B's list holds none of A's events; B asking for their outcomes
	// learns of no delivery.
	status, other, _ := signIn(t, ts, b).get(t, "/admin/events")
	require.Equal(t, http.StatusOK, status, other)
	require.NotContains(t, other, delivered.String())
	status, body := ts.do(t, http.MethodGet, "/api/admin/events/outcomes?ids="+delivered.String()+","+failing.String(), b.Key, "")
	require.Equal(t, http.StatusOK, status, body)
	var out struct {
		Data []struct {
			EventID    uuid.UUID `json:"event_id"`
			Deliveries int       `json:"deliveries"`
			Status     string    `json:"status"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	require.Len(t, out.Data, 2)
	for _, o := range out.Data {
		require.Equal(t, "none", o.Status, body)
		require.Zero(t, o.Deliveries, body)
	}

	// A bad list is refused with the error shape.
	many := make([]string, 101)
	for i := range many {
		many[i] = uuid.NewString()
	}
	for _, ids := range []string{"not-an-id", delivered.String() + ",x", strings.Join(many, ",")} {
		status, body := ts.do(t, http.MethodGet, "/api/admin/events/outcomes?ids="+ids, a.Key, "")
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Contains(t, body, "INVALID_IDS")
	}
}

// eventRow returns the events list's row of ev.
func eventRow(t *testing.T, page string, ev uuid.UUID) string {
	t.Helper()
	i := strings.Index(page, `data-event="`+ev.String()+`"`)
	require.GreaterOrEqual(t, i, 0, "event %s is not listed", ev)
	end := strings.Index(page[i:], "</tr>")
	require.Greater(t, end, 0)
	return page[i : i+end]
}
