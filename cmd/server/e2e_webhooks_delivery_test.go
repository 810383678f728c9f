package main

// One e2e test per edge of the delivery state machine, against a real
// loopback receiver and the real River client of the real server.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// attemptRow is a row of the delivery log table.
type attemptRow struct {
	Attempt    int
	Outcome    string
	StatusCode *int
	Error      *string
	Location   *string
}

func attemptsOf(t *testing.T, ts *testServer, jobID int64) []attemptRow {
	t.Helper()
	rows, err := ts.App.Pool.Query(context.Background(),
		`SELECT attempt, outcome, status_code, error, location FROM webhook_attempts WHERE job_id = $1 ORDER BY id`, jobID)
	require.NoError(t, err)
	defer rows.Close()
	var out []attemptRow
	for rows.Next() {
		var a attemptRow
		require.NoError(t, rows.Scan(&a.Attempt, &a.Outcome, &a.StatusCode, &a.Error, &a.Location))
		out = append(out, a)
	}
	require.NoError(t, rows.Err())
	return out
}

// sameMessage requires that every request carried the same webhook-id and
// body: a retry is the same message.
func sameMessage(t *testing.T, reqs []received) {
	t.Helper()
	for _, r := range reqs[1:] {
		require.Equal(t, reqs[0].Header.Get("webhook-id"), r.Header.Get("webhook-id"))
		require.True(t, bytes.Equal(reqs[0].Body, r.Body))
	}
}

func TestWebhookEdge2xxCompletes(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	_, key := webhookOwner(t, ts)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}})
	eventID, jobID := sendTest(t, ts, key, ep.ID)
	d := waitDelivery(t, ts, key, ep.ID, eventID, "completed")
	require.Equal(t, 1, d.Attempt)
	require.Equal(t, 200, *d.StatusCode)
	require.Equal(t, `{"ok":true}`, *d.Response)
	require.NotNil(t, d.LatencyMS)
	require.Equal(t, []attemptRow{{Attempt: 1, Outcome: "completed", StatusCode: ptr(200)}}, attemptsOf(t, ts, jobID))
	require.Nil(t, getEndpoint(t, ts, key, ep.ID).FailingSince)
}

func TestWebhookEdge500ThenSuccessRetriesAndClearsTheFailure(t *testing.T) {
	t.Parallel()
	// Scale 1000: the 5 s first backoff takes 5 ms.
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1000)})
	_, key := webhookOwner(t, ts)
	var failingSeen *time.Time
	var failingErr error
	var once sync.Once
	var tsRef *testServer
	var epID uuid.UUID
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		// By the second attempt the first failure is on the endpoint.
		once.Do(func() {
			var fs *time.Time
			failingErr = tsRef.App.Pool.QueryRow(context.Background(), `SELECT failing_since FROM webhook_endpoints WHERE id = $1`, epID).Scan(&fs)
			failingSeen = fs
		})
		w.WriteHeader(http.StatusAccepted)
	})
	tsRef = ts
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}})
	epID = ep.ID
	eventID, jobID := sendTest(t, ts, key, ep.ID)
	d := waitDelivery(t, ts, key, ep.ID, eventID, "completed")
	require.Equal(t, 2, d.Attempt)
	require.Nil(t, d.LastError, "a delivered row shows no earlier error")
	var det deliveryDetail
	getJSON(t, ts, key, fmt.Sprintf("/api/admin/webhooks/%s/deliveries/%d", ep.ID, jobID), http.StatusOK, &det)
	require.Len(t, det.Attempts, 2)
	require.Contains(t, *det.Attempts[0].Error, "HTTP 500", "the earlier error is in the attempts")
	reqs := rc.requests()
	require.Equal(t, 2, len(reqs))
	sameMessage(t, reqs)
	require.NoError(t, failingErr)
	require.NotNil(t, failingSeen, "a 500 marks the endpoint failing")
	require.Nil(t, getEndpoint(t, ts, key, ep.ID).FailingSince, "a success clears it")
	got := attemptsOf(t, ts, jobID)
	require.Len(t, got, 2)
	require.Equal(t, "retryable", got[0].Outcome)
	require.Equal(t, "completed", got[1].Outcome)
}

func TestWebhookEdge410DiscardsAtOnceAndRedeliverQueuesItAgain(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	_, key := webhookOwner(t, ts)
	gone := true
	var mu sync.Mutex
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if gone {
			w.WriteHeader(http.StatusGone)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}})
	eventID, jobID := sendTest(t, ts, key, ep.ID)
	// JobCancel: River's state for "discarded at once".
	d := waitDelivery(t, ts, key, ep.ID, eventID, "cancelled", "discarded")
	require.Equal(t, 1, d.Attempt)
	require.Equal(t, 410, *d.StatusCode)
	require.Equal(t, 1, rc.count())
	require.NotNil(t, getEndpoint(t, ts, key, ep.ID).FailingSince, "a 410 counts as a failure")

	mu.Lock()
	gone = false
	mu.Unlock()
	status, resp := ts.do(t, http.MethodPost, "/api/admin/webhooks/"+ep.ID.String()+"/redeliver", key, "")
	require.Equal(t, http.StatusOK, status, resp)
	require.JSONEq(t, `{"count":1,"states":["discarded","cancelled"],"by_state":{"discarded":0,"cancelled":1},"skipped":[]}`, resp)
	d = waitDelivery(t, ts, key, ep.ID, eventID, "completed")
	require.Equal(t, jobID, d.JobID, "the same job is queued again")
	reqs := rc.requests()
	require.Equal(t, 2, len(reqs))
	sameMessage(t, reqs)
	status, resp = ts.do(t, http.MethodPost, "/api/admin/webhooks/"+ep.ID.String()+"/redeliver", key, "")
	require.Equal(t, http.StatusOK, status, resp)
	require.JSONEq(t, `{"count":0,"states":["discarded","cancelled"],"by_state":{"discarded":0,"cancelled":0},"skipped":[]}`, resp, "nothing discarded is left")
}

func TestWebhookEdge429RetryAfterSnoozesWithoutSpendingAnAttempt(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	_, key := webhookOwner(t, ts)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}})
	eventID, jobID := sendTest(t, ts, key, ep.ID)
	d := waitDelivery(t, ts, key, ep.ID, eventID, "completed")
	require.Equal(t, 1, d.Attempt, "the snooze spent no attempt")
	require.Equal(t, 1, d.Snoozes)
	require.Nil(t, d.LastError, "a snooze is not an error in River's log")
	reqs := rc.requests()
	require.Equal(t, 2, len(reqs))
	sameMessage(t, reqs)
	require.GreaterOrEqual(t, reqs[1].At.Sub(reqs[0].At), time.Second, "Retry-After was honoured")
	got := attemptsOf(t, ts, jobID)
	require.Len(t, got, 2)
	require.Equal(t, "snoozed", got[0].Outcome)
	require.Equal(t, 429, *got[0].StatusCode)
}

func TestWebhookEdgeTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1000)})
	_, key := webhookOwner(t, ts)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			// Never answer: the sender gives up at its 10 s timeout and
			// closes the connection.
			<-r.Context().Done()
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}})
	eventID, jobID := sendTest(t, ts, key, ep.ID)
	d := waitDelivery(t, ts, key, ep.ID, eventID, "completed")
	require.Equal(t, 2, d.Attempt)
	got := attemptsOf(t, ts, jobID)
	require.Len(t, got, 2)
	require.Equal(t, "retryable", got[0].Outcome)
	require.Nil(t, got[0].StatusCode)
	require.Contains(t, *got[0].Error, "timeout")
}

func TestWebhookEdgeSSRFBlockedIsDiscardedBeforeAnyPacket(t *testing.T) {
	t.Parallel()
	// Registered while the policy allowed loopback; then the server runs
	// with STANDMEET_EGRESS_ALLOW unset, as after the policy was tightened
	// (or a name rebound to an internal address): the dial refuses it.
	masterKey := make([]byte, 32)
	_, err := rand.Read(masterKey)
	require.NoError(t, err)
	mk := base64.StdEncoding.EncodeToString(masterKey)
	before := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.1/32", "STANDMEET_MASTER_KEY": mk}})
	_, key := webhookOwner(t, before)
	rc := newReceiver(t, nil)
	ep := createEndpoint(t, before, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}})
	before.Stop()
	ts := startTestServer(t, testServerOptions{DBURL: before.DBURL, Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "", "STANDMEET_MASTER_KEY": mk}})
	eventID, jobID := sendTest(t, ts, key, ep.ID)
	d := waitDelivery(t, ts, key, ep.ID, eventID, "cancelled", "discarded")
	require.Equal(t, 1, d.Attempt)
	require.Zero(t, rc.count(), "nothing reached the receiver")
	got := attemptsOf(t, ts, jobID)
	require.Len(t, got, 1)
	require.Equal(t, "discarded", got[0].Outcome)
	require.Contains(t, *got[0].Error, "blocked")
	require.NotNil(t, getEndpoint(t, ts, key, ep.ID).FailingSince)
}

func TestWebhookEdgeBusyEndpointSnoozesWithoutSpendingAnAttempt(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	_, key := webhookOwner(t, ts)
	release := make(chan struct{})
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			<-release
		}
		w.WriteHeader(http.StatusOK)
	})
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}})
	first, _ := sendTest(t, ts, key, ep.ID)
	require.Eventually(t, func() bool { return rc.count() == 1 }, 30*time.Second, 10*time.Millisecond)
	second, _ := sendTest(t, ts, key, ep.ID)
	// The second waits on the deck (3 s at most), then snoozes: hold the
	// first until River has recorded that snooze.
	require.Eventually(t, func() bool {
		for _, d := range deliveries(t, ts, key, ep.ID) {
			if d.EventID == second && d.Snoozes > 0 {
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, 1, rc.count(), "the busy delivery did not reach the receiver")
	close(release)
	waitDelivery(t, ts, key, ep.ID, first, "completed")
	d := waitDelivery(t, ts, key, ep.ID, second, "completed")
	require.Equal(t, 1, d.Attempt, "waiting for the lease spent no attempt")
	require.EqualValues(t, 1, rc.maxSeen.Load(), "never two in flight")
}

func TestWebhookEdgeDisabledMidFlightDiscardsTheRetry(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1000)})
	_, key := webhookOwner(t, ts)
	inFlight, release := make(chan struct{}), make(chan struct{})
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			close(inFlight)
			<-release
		}
		w.WriteHeader(http.StatusInternalServerError)
	})
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}})
	eventID, jobID := sendTest(t, ts, key, ep.ID)
	<-inFlight
	status, resp := ts.do(t, http.MethodPatch, "/api/admin/webhooks/"+ep.ID.String(), key, `{"enabled":false}`)
	require.Equal(t, http.StatusOK, status, resp)
	close(release)
	d := waitDelivery(t, ts, key, ep.ID, eventID, "cancelled", "discarded")
	require.Equal(t, 2, d.Attempt)
	require.Equal(t, 1, rc.count(), "the retry never reached the receiver")
	got := attemptsOf(t, ts, jobID)
	require.Len(t, got, 2)
	require.Equal(t, "retryable", got[0].Outcome)
	require.Equal(t, "discarded", got[1].Outcome)
	require.Equal(t, "endpoint disabled", *got[1].Error)
	after := getEndpoint(t, ts, key, ep.ID)
	require.False(t, after.Enabled)
	require.Equal(t, "disabled by the owner", *after.DisabledReason)
}

func TestWebhookEdgeEventPrunedIsDiscarded(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	ownerID, key := webhookOwner(t, ts)
	rc := newReceiver(t, nil)
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}})
	// A failing endpoint's new deliveries wait out the 5 min cooldown:
	// time enough to prune the event under a queued delivery.
	dbExec(t, ts, `UPDATE webhook_endpoints SET failing_since = now() - interval '1 minute', failed_at = now() WHERE id = $1`, ep.ID)
	eventID := recordEvent(t, ts, ownerID, "code.issued", "code:1", map[string]any{"code_id": "1"})
	d := waitDelivery(t, ts, key, ep.ID, eventID, "scheduled")
	dbExec(t, ts, `DELETE FROM events WHERE id = $1`, eventID)
	_, err := ts.App.Worker.JobRetry(context.Background(), d.JobID)
	require.NoError(t, err)
	d = waitDelivery(t, ts, key, ep.ID, eventID, "cancelled", "discarded")
	require.Zero(t, rc.count())
	got := attemptsOf(t, ts, d.JobID)
	require.Len(t, got, 1)
	require.Equal(t, "event pruned", *got[0].Error)
}

func TestWebhookEdgeEighteenAttemptsThenDiscarded(t *testing.T) {
	t.Parallel()
	// Scale 10^6: ten hours take 36 ms, so the whole 5.3-day schedule
	// runs in about a second without sleeping.
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1e6)})
	_, key := webhookOwner(t, ts)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Location", "https://elsewhere.example/")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}})
	eventID, jobID := sendTest(t, ts, key, ep.ID)
	d := waitDelivery(t, ts, key, ep.ID, eventID, "discarded")
	require.Equal(t, 18, d.Attempt)
	require.Equal(t, 18, d.MaxAttempts)
	require.Equal(t, 307, *d.StatusCode)
	require.Equal(t, "https://elsewhere.example/", *d.Location, "a 3xx is a failure with its Location recorded")
	reqs := rc.requests()
	require.Equal(t, 18, len(reqs), "a redirect is never followed and the 18th attempt is the last")
	sameMessage(t, reqs)
	got := attemptsOf(t, ts, jobID)
	require.Len(t, got, 18)
	for i, a := range got {
		require.Equal(t, i+1, a.Attempt)
		require.Equal(t, "retryable", a.Outcome)
	}
}

func TestWebhookStateMachineCooldownDisableAndReenable(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	ownerID, key := webhookOwner(t, ts)
	var mu sync.Mutex
	answer := http.StatusInternalServerError
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(answer)
	})
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}})

	// Cooldown: while failing, a new delivery is scheduled 5 min out.
	dbExec(t, ts, `UPDATE webhook_endpoints SET failing_since = now() - interval '1 hour', failed_at = now() WHERE id = $1`, ep.ID)
	cooled := recordEvent(t, ts, ownerID, "code.issued", "code:1", map[string]any{})
	d := waitDelivery(t, ts, key, ep.ID, cooled, "scheduled")
	job, err := ts.App.Worker.JobGet(t.Context(), d.JobID)
	require.NoError(t, err)
	require.InDelta(t, (5 * time.Minute).Seconds(), job.ScheduledAt.Sub(job.CreatedAt).Seconds(), 5)

	// Five days of failure: the next failure disables the endpoint.
	dbExec(t, ts, `UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1`, ep.ID)
	testEvent, _ := sendTest(t, ts, key, ep.ID)
	waitDelivery(t, ts, key, ep.ID, testEvent, "retryable", "available", "scheduled")
	require.Eventually(t, func() bool { return !getEndpoint(t, ts, key, ep.ID).Enabled }, 30*time.Second, 20*time.Millisecond)
	off := getEndpoint(t, ts, key, ep.ID)
	require.NotNil(t, off.DisabledReason)
	require.Contains(t, *off.DisabledReason, "failed continuously")
	require.NotNil(t, off.FailingSince)
	status, resp := ts.do(t, http.MethodPost, "/api/admin/webhooks/"+ep.ID.String()+"/test", key, "")
	require.Equal(t, http.StatusConflict, status, resp)
	require.Contains(t, resp, "ENDPOINT_DISABLED")

	// Re-enable: the failure state is cleared and deliveries flow.
	mu.Lock()
	answer = http.StatusOK
	mu.Unlock()
	status, resp = ts.do(t, http.MethodPatch, "/api/admin/webhooks/"+ep.ID.String(), key, `{"enabled":true}`)
	require.Equal(t, http.StatusOK, status, resp)
	on := getEndpoint(t, ts, key, ep.ID)
	require.True(t, on.Enabled)
	require.Nil(t, on.DisabledReason)
	require.Nil(t, on.FailingSince)
	fresh := recordEvent(t, ts, ownerID, "code.revoked", "code:1", map[string]any{})
	got := waitDelivery(t, ts, key, ep.ID, fresh, "completed")
	require.Equal(t, 1, got.Attempt)
	var body thinBody
	last := rc.requests()[rc.count()-1]
	require.NoError(t, json.Unmarshal(last.Body, &body))
	require.Equal(t, "code.revoked", body.Type)
	require.True(t, strings.HasPrefix(last.Header.Get("webhook-signature"), "v1,"))
}

func ptr[T any](v T) *T { return &v }
