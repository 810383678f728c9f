package main

// The delivery log and its steering through the REST ops: filters, paging
// both ways, one delivery with its attempts and what it sends, retry now,
// send again, redeliver and recover, and every refusal.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/mcp"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// logPage is webhooks.deliveries' answer.
type logPage struct {
	Data []struct {
		deliveryRow
		Status string `json:"status"`
	} `json:"data"`
	NextCursor *string `json:"next_cursor"`
	PrevCursor *string `json:"prev_cursor"`
}

// deliveryDetail is webhooks.delivery's answer.
type deliveryDetail struct {
	deliveryRow
	Status   string `json:"status"`
	Attempts []struct {
		Attempt    int     `json:"attempt"`
		Outcome    string  `json:"outcome"`
		StatusCode *int    `json:"status_code"`
		LatencyMS  *int    `json:"latency_ms"`
		Response   *string `json:"response"`
		Error      *string `json:"error"`
		Timestamp  *string `json:"webhook_timestamp"`
		Signature  *string `json:"webhook_signature"`
		// Headers are what the attempt sent.
		Headers map[string]string `json:"headers"`
	} `json:"attempts"`
	Request *struct {
		URL     string            `json:"url"`
		Body    string            `json:"body"`
		Headers map[string]string `json:"headers"`
	} `json:"request"`
}

func getJSON(t *testing.T, ts *testServer, key, path string, want int, out any) string {
	t.Helper()
	status, body := ts.do(t, http.MethodGet, path, key, "")
	require.Equal(t, want, status, "%s: %s", path, body)
	if out != nil {
		require.NoError(t, json.Unmarshal([]byte(body), out), body)
	}
	return body
}

func postJSON(t *testing.T, ts *testServer, key, path, in string, want int, out any) string {
	t.Helper()
	status, body := ts.do(t, http.MethodPost, path, key, in)
	require.Equal(t, want, status, "%s: %s", path, body)
	if out != nil {
		require.NoError(t, json.Unmarshal([]byte(body), out), body)
	}
	return body
}

func countJobs(t *testing.T, ts *testServer, endpointID uuid.UUID) int {
	t.Helper()
	return len(listJobs(t, ts, jobsOfKind(delivery.KindDeliver), forEndpoint(endpointID)))
}

func TestDeliveryLogFiltersStepsAndRecovers(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	ownerID, key := webhookOwner(t, ts)
	var failing atomic.Bool
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "upstream broke: trace-7f3a")
			return
		}
		fmt.Fprint(w, "ok-received")
	})
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL + "/hook", "event_types": []string{"code.*", "webhook.test"}, "enabled": false})
	base := "/api/admin/webhooks/" + ep.ID.String()

	// Events while the endpoint is disabled: no delivery, until recovered.
	t0 := time.Now().UTC().Add(-time.Second)
	var evs []uuid.UUID
	for i := range 3 {
		evs = append(evs, recordEvent(t, ts, ownerID, "code.issued", fmt.Sprintf("code:%d", i), map[string]any{}))
	}
	revoked := recordEvent(t, ts, ownerID, "code.revoked", "code:9", map[string]any{})
	// Another endpoint's test: of a type this one subscribes to, but the
	// fan-out sends a test to its own endpoint only, and so does recover.
	othersTest := recordEvent(t, ts, ownerID, "webhook.test", "webhook:other", map[string]any{"endpoint_id": uuid.NewString(), "test": true})
	waitFannedOut(t, ts, append([]uuid.UUID{revoked, othersTest}, evs...)...)
	require.Zero(t, countJobs(t, ts, ep.ID))
	since := t0.Format(time.RFC3339Nano)
	body := postJSON(t, ts, key, base+"/recover", `{"since":"`+since+`"}`, http.StatusConflict, nil)
	require.Contains(t, body, "ENDPOINT_DISABLED")
	status, resp := ts.do(t, http.MethodPatch, base, key, `{"enabled":true}`)
	require.Equal(t, http.StatusOK, status, resp)

	// Refusals change nothing.
	for _, c := range []struct{ in, code string }{
		{`{}`, "INVALID_TIME"},
		{`{"since":"yesterday"}`, "INVALID_TIME"},
		{`{"since":"` + since + `","until":"2000-01-01T00:00:00Z"}`, "INVALID_TIME"},
		{`{"since":"` + since + `","extra":1}`, "INVALID_JSON"},
	} {
		body := postJSON(t, ts, key, base+"/recover", c.in, http.StatusBadRequest, nil)
		require.Contains(t, body, c.code, c.in)
	}
	// More than 1,000 events in the range: refused whole.
	_, err := ts.App.Pool.Exec(t.Context(), `INSERT INTO events (owner_id, type, subject, occurred_at, fanned_out_at)
SELECT $1, 'code.issued', 'code:bulk', now() - interval '2 hours' + i * interval '1 ms', now() FROM generate_series(1, 1001) AS i`, ownerID)
	require.NoError(t, err)
	bulkSince := time.Now().UTC().Add(-3 * time.Hour).Format(time.RFC3339)
	body = postJSON(t, ts, key, base+"/recover", `{"since":"`+bulkSince+`","until":"`+since+`"}`, http.StatusBadRequest, nil)
	require.Contains(t, body, "RANGE_TOO_LARGE")
	require.Zero(t, countJobs(t, ts, ep.ID), "a refused recover queues nothing")

	// Recover the range: the three code.issued and the code.revoked; the
	// other endpoint's test is skipped, with its reason.
	type skip struct {
		EventID uuid.UUID `json:"event_id"`
		Reason  string    `json:"reason"`
	}
	var rec struct {
		Events, Queued, Existing int
		Skipped                  []skip
	}
	postJSON(t, ts, key, base+"/recover", `{"since":"`+since+`"}`, http.StatusAccepted, &rec)
	require.Equal(t, 5, rec.Events)
	require.Equal(t, 4, rec.Queued)
	require.Equal(t, []skip{{EventID: othersTest, Reason: "not_subscribed"}}, rec.Skipped)
	// Completed in River, not only received: River records a run's
	// completion after the receiver has answered.
	for _, id := range append([]uuid.UUID{revoked}, evs...) {
		waitDelivery(t, ts, key, ep.ID, id, "completed")
	}
	require.Eventually(t, func() bool { return rc.count() == 4 }, 30*time.Second, 20*time.Millisecond)
	// Idempotent: the second recover of the range queues nothing.
	postJSON(t, ts, key, base+"/recover", `{"since":"`+since+`"}`, http.StatusAccepted, &rec)
	require.Equal(t, [3]int{5, 0, 4}, [3]int{rec.Events, rec.Queued, rec.Existing})
	time.Sleep(200 * time.Millisecond)
	require.Equal(t, 4, rc.count())
	require.Equal(t, 4, countJobs(t, ts, ep.ID))

	// Filters.
	var page logPage
	getJSON(t, ts, key, base+"/deliveries?state=delivered", http.StatusOK, &page)
	require.Len(t, page.Data, 4)
	require.Equal(t, "delivered", page.Data[0].Status)
	getJSON(t, ts, key, base+"/deliveries?event_type=code.revoked", http.StatusOK, &page)
	require.Len(t, page.Data, 1)
	require.Equal(t, "code.revoked", page.Data[0].EventType)
	getJSON(t, ts, key, base+"/deliveries?state=failed", http.StatusOK, &page)
	require.Empty(t, page.Data)
	getJSON(t, ts, key, base+"/deliveries?since="+time.Now().UTC().Add(time.Hour).Format(time.RFC3339), http.StatusOK, &page)
	require.Empty(t, page.Data)
	for q, code := range map[string]string{
		"state=bogus": "INVALID_STATE", "state=completed": "INVALID_STATE", "event_type=no.such": "INVALID_EVENT_TYPE",
		"since=yesterday": "INVALID_TIME", "until=2000-01-01": "INVALID_TIME", "before=x": "INVALID_CURSOR",
		"cursor=5&before=6": "INVALID_CURSOR",
	} {
		body := getJSON(t, ts, key, base+"/deliveries?"+q, http.StatusBadRequest, nil)
		require.Contains(t, body, code, q)
	}

	// Paging both ways, newest first.
	getJSON(t, ts, key, base+"/deliveries?limit=3", http.StatusOK, &page)
	require.Len(t, page.Data, 3)
	require.Nil(t, page.PrevCursor)
	require.NotNil(t, page.NextCursor)
	newest := page.Data[0].JobID
	require.Greater(t, newest, page.Data[1].JobID)
	getJSON(t, ts, key, base+"/deliveries?limit=3&cursor="+*page.NextCursor, http.StatusOK, &page)
	require.Len(t, page.Data, 1)
	require.Nil(t, page.NextCursor)
	require.NotNil(t, page.PrevCursor)
	getJSON(t, ts, key, base+"/deliveries?limit=3&before="+*page.PrevCursor, http.StatusOK, &page)
	require.Len(t, page.Data, 3)
	require.Equal(t, newest, page.Data[0].JobID, "back to the newest page")
	require.Nil(t, page.PrevCursor)

	// One delivery: its attempt, the receiver's answer, what was sent.
	d := waitDelivery(t, ts, key, ep.ID, evs[0], "completed")
	var det deliveryDetail
	getJSON(t, ts, key, fmt.Sprintf("%s/deliveries/%d", base, d.JobID), http.StatusOK, &det)
	require.Equal(t, "delivered", det.Status)
	require.Len(t, det.Attempts, 1)
	require.Equal(t, 200, *det.Attempts[0].StatusCode)
	require.Equal(t, "ok-received", *det.Attempts[0].Response)
	require.NotNil(t, det.Attempts[0].LatencyMS)
	require.NotNil(t, det.Request)
	var sent *received
	for _, r := range rc.requests() {
		if r.Header.Get("webhook-id") == evs[0].String() {
			sent = &r
		}
	}
	require.NotNil(t, sent)
	require.Equal(t, string(sent.Body), det.Request.Body, "the log shows the exact body sent")
	require.Equal(t, evs[0].String(), det.Request.Headers["Webhook-Id"])
	require.NotContains(t, strings.ToLower(fmt.Sprint(det.Request.Headers)), "whsec_", "never the secret")
	require.Equal(t, sent.Header.Get("User-Agent"), det.Request.Headers["User-Agent"], "the log shows the User-Agent sent, with the server's version")
	// The attempt's stored timestamp and signature are exactly those the
	// receiver got, and its headers are the request's with them.
	require.NotNil(t, det.Attempts[0].Timestamp)
	require.NotNil(t, det.Attempts[0].Signature)
	require.Equal(t, sent.Header.Get("webhook-timestamp"), *det.Attempts[0].Timestamp)
	require.Equal(t, sent.Header.Get("webhook-signature"), *det.Attempts[0].Signature)
	require.True(t, strings.HasPrefix(*det.Attempts[0].Signature, "v1,"))
	h := det.Attempts[0].Headers
	require.Equal(t, sent.Header.Get("webhook-signature"), h["Webhook-Signature"])
	require.Equal(t, sent.Header.Get("webhook-timestamp"), h["Webhook-Timestamp"])
	require.Equal(t, evs[0].String(), h["Webhook-Id"])
	require.Equal(t, "application/json", h["Content-Type"])
	require.NotContains(t, strings.ToLower(fmt.Sprint(h)), "whsec_", "never the secret")
	for _, path := range []string{"/deliveries/999999999", "/deliveries/0"} {
		getJSON(t, ts, key, base+path, http.StatusNotFound, nil)
	}
	getJSON(t, ts, key, base+"/deliveries/abc", http.StatusNotFound, nil)
	other := createEndpoint(t, ts, key, map[string]any{"url": rc.URL + "/other", "event_types": []string{"booking.*"}})
	getJSON(t, ts, key, fmt.Sprintf("/api/admin/webhooks/%s/deliveries/%d", other.ID, d.JobID), http.StatusNotFound, nil)
	postJSON(t, ts, key, fmt.Sprintf("/api/admin/webhooks/%s/deliveries/%d/resend", other.ID, d.JobID), "", http.StatusNotFound, nil)

	// Retry now: a delivery that failed and waits for its retry (5 s) runs
	// at once; the row then shows its success, the error stays in the
	// attempts.
	failing.Store(true)
	var test struct {
		EventID uuid.UUID `json:"event_id"`
		JobID   int64     `json:"job_id"`
	}
	postJSON(t, ts, key, base+"/test", "", http.StatusAccepted, &test)
	// River retries it once (5 s); the next retry is 5 minutes away, so
	// nothing races the retry below.
	require.Eventually(t, func() bool {
		d = waitDelivery(t, ts, key, ep.ID, test.EventID, "retryable")
		return d.Attempt == 2
	}, 60*time.Second, 50*time.Millisecond)
	require.NotNil(t, d.LastError)
	job := fmt.Sprintf("%s/deliveries/%d", base, test.JobID)
	body = postJSON(t, ts, key, job+"/resend", "", http.StatusConflict, nil)
	require.Contains(t, body, "DELIVERY_STATE")
	failing.Store(false)
	var out struct{ From, State string }
	postJSON(t, ts, key, job+"/retry", "", http.StatusOK, &out)
	require.Equal(t, "retryable", out.From)
	require.Equal(t, "available", out.State)
	d = waitDelivery(t, ts, key, ep.ID, test.EventID, "completed")
	require.Nil(t, d.LastError, "a delivered row shows no old error")
	require.Equal(t, 200, *d.StatusCode)
	getJSON(t, ts, key, job, http.StatusOK, &det)
	require.Len(t, det.Attempts, 3)
	require.Equal(t, 500, *det.Attempts[0].StatusCode)
	require.Equal(t, "upstream broke: trace-7f3a", *det.Attempts[0].Response)
	require.Equal(t, 500, *det.Attempts[1].StatusCode)
	require.Equal(t, 200, *det.Attempts[2].StatusCode)
	// Each attempt shows the signature it sent, request by request.
	var sentTest []received
	for _, r := range rc.requests() {
		if r.Header.Get("webhook-id") == test.EventID.String() {
			sentTest = append(sentTest, r)
		}
	}
	require.Len(t, sentTest, 3)
	for i, a := range det.Attempts {
		require.NotNil(t, a.Signature, "attempt %d", i+1)
		require.Equal(t, sentTest[i].Header.Get("webhook-signature"), *a.Signature, "attempt %d", i+1)
		require.Equal(t, sentTest[i].Header.Get("webhook-timestamp"), *a.Timestamp, "attempt %d", i+1)
		require.Equal(t, *a.Signature, a.Headers["Webhook-Signature"], "attempt %d", i+1)
	}
	require.NotEqual(t, *det.Attempts[0].Timestamp, *det.Attempts[2].Timestamp, "a later attempt signs afresh")

	// Send again: a delivered one goes once more, same webhook-id.
	body = postJSON(t, ts, key, job+"/retry", "", http.StatusConflict, nil)
	require.Contains(t, body, "DELIVERY_STATE")
	before := rc.count()
	postJSON(t, ts, key, job+"/resend", "", http.StatusOK, &out)
	require.Equal(t, "completed", out.From)
	require.Eventually(t, func() bool { return rc.count() == before+1 }, 30*time.Second, 20*time.Millisecond)
	last := rc.requests()[before]
	require.Equal(t, test.EventID.String(), last.Header.Get("webhook-id"))

	// Redeliver failed says what it takes.
	var redo struct {
		Count   int            `json:"count"`
		States  []string       `json:"states"`
		ByState map[string]int `json:"by_state"`
	}
	postJSON(t, ts, key, base+"/redeliver", "", http.StatusOK, &redo)
	require.Equal(t, []string{"discarded", "cancelled"}, redo.States)
	require.Equal(t, map[string]int{"discarded": 0, "cancelled": 0}, redo.ByState)

	// A disabled endpoint is steered by nothing.
	status, resp = ts.do(t, http.MethodPatch, base, key, `{"enabled":false}`)
	require.Equal(t, http.StatusOK, status, resp)
	for _, p := range []string{job + "/retry", job + "/resend"} {
		body := postJSON(t, ts, key, p, "", http.StatusConflict, nil)
		require.Contains(t, body, "ENDPOINT_DISABLED")
	}
}

func TestMCPToolsReadAndSteerTheDeliveryLog(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.0/8"}})
	o := newSurfaceOwner(t, ts)
	recv := newHookSink(t)
	cs := mcpSession(t, ts, o.Key)
	type endpoint struct {
		ID string `json:"id"`
	}
	since := time.Now().UTC().Add(-time.Second).Format(time.RFC3339Nano)
	ep := callTool[endpoint](t, cs, "webhooks_create", map[string]any{"url": recv.URL + "/hook", "event_types": []string{"code.*"}, "enabled": false})
	ev := recordEvent(t, ts, o.ID, "code.issued", "code:1", map[string]any{})
	waitFannedOut(t, ts, ev)
	callTool[endpoint](t, cs, "webhooks_update", map[string]any{"id": ep.ID, "enabled": true})

	rec := callTool[struct{ Events, Queued, Existing int }](t, cs, "webhooks_recover", map[string]any{"id": ep.ID, "since": since})
	require.Equal(t, struct{ Events, Queued, Existing int }{1, 1, 0}, rec)
	var job int64
	require.Eventually(t, func() bool {
		page := callTool[logPage](t, cs, "webhooks_deliveries", map[string]any{"id": ep.ID, "state": "delivered"})
		if len(page.Data) == 1 {
			job = page.Data[0].JobID
			return true
		}
		return false
	}, 30*time.Second, 100*time.Millisecond)
	det := callTool[deliveryDetail](t, cs, "webhooks_delivery", map[string]any{"id": ep.ID, "job_id": job})
	require.Len(t, det.Attempts, 1)
	require.Equal(t, string(recv.all()[0].Body), det.Request.Body)
	out := callTool[struct{ From, State string }](t, cs, "webhooks_resend_delivery", map[string]any{"id": ep.ID, "job_id": job})
	require.Equal(t, "completed", out.From)
	require.Eventually(t, func() bool { return len(recv.all()) == 2 }, 30*time.Second, 50*time.Millisecond)

	for tool, args := range map[string]map[string]any{
		"webhooks_recover":        {"id": ep.ID},
		"webhooks_deliveries":     {"id": ep.ID, "state": "bogus"},
		"webhooks_retry_delivery": {"id": ep.ID, "job_id": job},
	} {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err)
		e := mcp.ErrorOf(res)
		require.NotNil(t, e, "%s: %s", tool, textOf(res))
		require.Contains(t, []string{"INVALID_TIME", "INVALID_STATE", "DELIVERY_STATE"}, e.Code)
	}
}
