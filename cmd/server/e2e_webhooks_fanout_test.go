package main

// The fan-out's account of every event: which endpoints got no delivery,
// or got it late, and why — through the REST op, River's metadata and the
// event page in a browser.

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// fanoutFixture is one owner's endpoints, one per fate of an event.
type fanoutFixture struct {
	A, B, C, D, E, F string
	rc               *receiver
}

// newFanoutFixture creates: A (corpus.*, gets the event), B (code.*, not
// subscribed), C (corpus.*, an embed whose code admits wiki://software/*
// only), D (corpus.*, disabled), E (corpus.*, failing: cooling down), F
// (corpus.*, deleted: not listed).
func newFanoutFixture(t *testing.T, ts *testServer, key string) fanoutFixture {
	t.Helper()
	fx := fanoutFixture{rc: newReceiver(t, nil)}
	role := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/roles", key,
		`{"name":"software","uri_globs":["wiki://software/*"],"published_only":true}`)
	code := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/codes", key,
		`{"role_id":"`+role["id"].(string)+`","label":"partner"}`)
	embed := ts.mustDo(t, http.StatusCreated, http.MethodPost, "/api/admin/embeds", key,
		`{"code_id":"`+code["id"].(string)+`","name":"partner site"}`)
	mk := func(path, types, extra string) string {
		return createEndpointAPI(t, ts, key, `{"url":"`+fx.rc.URL+path+`","event_types":[`+types+`]`+extra+`}`)
	}
	fx.A = mk("/a", `"corpus.*"`, "")
	fx.B = mk("/b", `"code.*"`, "")
	fx.C = mk("/c", `"corpus.*"`, `,"embed_id":"`+embed["id"].(string)+`"`)
	fx.D = mk("/d", `"corpus.*"`, `,"enabled":false`)
	fx.E = mk("/e", `"corpus.*"`, "")
	dbExec(t, ts, `UPDATE webhook_endpoints SET failing_since = now() - interval '1 hour', failed_at = now() WHERE id = $1`, fx.E)
	fx.F = mk("/f", `"corpus.*"`, "")
	status, body := ts.do(t, http.MethodDelete, "/api/admin/webhooks/"+fx.F, key, "")
	require.Equal(t, http.StatusNoContent, status, body)
	return fx
}

// fanoutView is the answer of webhooks.event_fanout.
type fanoutView struct {
	Recorded  bool `json:"recorded"`
	Endpoints []struct {
		EndpointID string     `json:"endpoint_id"`
		Reason     string     `json:"reason"`
		Text       string     `json:"text"`
		Delivered  bool       `json:"delivered"`
		Until      *time.Time `json:"until"`
	} `json:"endpoints"`
}

// waitFanout waits for the event's fan-out summary and returns it.
func waitFanout(t *testing.T, ts *testServer, key string, eventID uuid.UUID) fanoutView {
	t.Helper()
	var v fanoutView
	require.Eventually(t, func() bool {
		status, body := ts.do(t, http.MethodGet, "/api/admin/events/"+eventID.String()+"/fanout", key, "")
		require.Equal(t, http.StatusOK, status, body)
		require.NoError(t, json.Unmarshal([]byte(body), &v))
		return v.Recorded
	}, 30*time.Second, 20*time.Millisecond, "no fan-out summary for %s", eventID)
	return v
}

func TestWebhookFanoutSaysWhyEachEndpointGotNoDelivery(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	o := newSurfaceOwner(t, ts)
	fx := newFanoutFixture(t, ts, o.Key)

	note := func(subject string, published bool) uuid.UUID {
		return recordEvent(t, ts, o.ID, "corpus.note.changed", subject, map[string]any{"published": published, "was_published": false})
	}
	published := note("wiki://life/x", true)
	waitDelivery(t, ts, o.Key, uuid.MustParse(fx.A), published, "completed")
	v := waitFanout(t, ts, o.Key, published)
	reasons := map[string]string{}
	for _, e := range v.Endpoints {
		reasons[e.EndpointID] = e.Reason
		require.NotEmpty(t, e.Text)
		if e.EndpointID == fx.E {
			require.True(t, e.Delivered, "a cooling-down endpoint got its delivery, later")
			require.NotNil(t, e.Until)
			require.WithinDuration(t, time.Now().Add(5*time.Minute), *e.Until, time.Minute)
			require.Contains(t, e.Text, e.Until.UTC().Format(time.RFC3339))
		}
	}
	require.Equal(t, map[string]string{
		fx.B: "not_subscribed", fx.C: "out_of_scope_embed", fx.D: "endpoint_disabled", fx.E: "cooling_down",
	}, reasons, "A got it; F is deleted")

	// The delivery log's data says why E's delivery waits, and until when.
	e := waitDelivery(t, ts, o.Key, uuid.MustParse(fx.E), published, "scheduled")
	job, err := ts.App.Worker.JobGet(t.Context(), e.JobID)
	require.NoError(t, err)
	var meta struct {
		Wait struct {
			Reason string    `json:"reason"`
			Until  time.Time `json:"until"`
		} `json:"standmeet_wait"`
	}
	require.NoError(t, json.Unmarshal(job.Metadata, &meta))
	require.Equal(t, "cooling_down", meta.Wait.Reason)
	require.WithinDuration(t, e.ScheduledAt, meta.Wait.Until, time.Second)

	// An unpublished note is out of A's scope too; a raw one of everyone's.
	for subject, want := range map[string]map[string]string{
		"wiki://life/draft": {fx.A: "out_of_scope_unpublished", fx.E: "out_of_scope_unpublished"},
		"raw://inbox/1":     {fx.A: "out_of_scope_raw", fx.E: "out_of_scope_raw", fx.C: "out_of_scope_raw"},
	} {
		ev := note(subject, subject == "raw://inbox/1")
		got := map[string]string{}
		for _, e := range waitFanout(t, ts, o.Key, ev).Endpoints {
			got[e.EndpointID] = e.Reason
		}
		for id, r := range want {
			require.Equal(t, r, got[id], subject)
		}
		require.Equal(t, "not_subscribed", got[fx.B], subject)
		require.Equal(t, "endpoint_disabled", got[fx.D], subject)
		require.NotContains(t, got, fx.F)
	}

	// Another owner's event is not found.
	other := newSurfaceOwner(t, ts)
	status, body := ts.do(t, http.MethodGet, "/api/admin/events/"+published.String()+"/fanout", other.Key, "")
	require.Equal(t, http.StatusNotFound, status, body)
	status, body = ts.do(t, http.MethodGet, "/api/admin/events/not-a-uuid/fanout", o.Key, "")
	require.Equal(t, http.StatusNotFound, status, body)
}

func TestEventPageShowsWhyEndpointsGotNoDeliveryInABrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	o := newSurfaceOwner(t, ts)
	fx := newFanoutFixture(t, ts, o.Key)
	ev := recordEvent(t, ts, o.ID, "corpus.note.changed", "wiki://life/x", map[string]any{"published": true, "was_published": false})
	waitDelivery(t, ts, o.Key, uuid.MustParse(fx.A), ev, "completed")
	waitFanout(t, ts, o.Key, ev)

	b.do(chromedp.Navigate(ts.URL + "/admin/events/" + ev.String()))
	b.login(ts, o)
	b.do(chromedp.WaitVisible(chromedp.CSS("#event-fanout")))
	delivered := b.innerText("#event-deliveries")
	require.Contains(t, delivered, fx.rc.URL+"/a", "A's delivery is listed")
	require.Equal(t, 1, value(b, chromedp.Evaluate[int](`document.querySelectorAll('#event-deliveries a[href="/admin/webhooks/`+fx.A+`"]').length`)),
		"and linked to its endpoint")
	for id, want := range map[string]string{
		fx.B: "not subscribed", fx.C: "the embed's access code does not admit", fx.D: "endpoint disabled", fx.E: "cooldown until",
	} {
		row := b.innerText(`#event-fanout tr[data-endpoint="` + id + `"]`)
		require.Contains(t, row, want, id)
	}
	require.Len(t, b.rowIDs("data-reason"), 4, "F (deleted) is not listed, nor A")
	// E's delivery, scheduled 0 of 18, says why it waits.
	require.Contains(t, b.innerText(`#event-deliveries tr.delivery:has(a[href="/admin/webhooks/`+fx.E+`"]) .wait`),
		"cooldown until")
	b.snap("event-fanout")
}
