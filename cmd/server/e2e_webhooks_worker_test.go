package main

// The delivery worker honours each endpoint's settings (POST deadline,
// attempts) and reports every attempt on /metrics.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWebhookWorkerHonoursEndpointTimeoutAndAttempts(t *testing.T) {
	t.Parallel()
	// Scale 10^6: the retry waits take microseconds.
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1e6)})
	_, key := webhookOwner(t, ts)

	// max_attempts 2: the 2nd failed attempt is the last, whatever
	// River's own bound.
	failing := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	two := createEndpoint(t, ts, key, map[string]any{"url": failing.URL, "event_types": []string{"code.*"}, "max_attempts": 2})
	ev, jobID := sendTest(t, ts, key, two.ID)
	d := waitDelivery(t, ts, key, two.ID, ev, "cancelled", "discarded")
	require.Equal(t, 2, d.Attempt)
	require.Equal(t, 2, failing.count(), "no third POST")
	got := attemptsOf(t, ts, jobID)
	require.Len(t, got, 2)
	require.Equal(t, "retryable", got[0].Outcome)
	require.Equal(t, "discarded", got[1].Outcome)
	require.Equal(t, 500, *got[1].StatusCode)
	require.Contains(t, *got[1].Error, "attempt 2 of 2")

	// timeout_seconds 1: a receiver that sleeps 4 s is cut at about 1 s.
	slow := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(4 * time.Second):
		}
		w.WriteHeader(http.StatusNoContent)
	})
	one := createEndpoint(t, ts, key, map[string]any{"url": slow.URL, "event_types": []string{"code.*"},
		"timeout_seconds": 1, "max_attempts": 1})
	ev, jobID = sendTest(t, ts, key, one.ID)
	d = waitDelivery(t, ts, key, one.ID, ev, "cancelled", "discarded")
	require.Equal(t, 1, d.Attempt)
	require.NotNil(t, d.LatencyMS)
	require.GreaterOrEqual(t, *d.LatencyMS, 950, "cut at the endpoint's 1 s")
	require.Less(t, *d.LatencyMS, 2500, "not the 10 s default, nor the receiver's 4 s")
	got = attemptsOf(t, ts, jobID)
	require.Len(t, got, 1)
	require.True(t, strings.HasPrefix(*got[0].Error, "timeout"), *got[0].Error)
	require.Contains(t, *got[0].Error, "attempt 1 of 1")

	// The operator's signals: attempts by outcome and class, latency.
	status, body := ts.do(t, http.MethodGet, "/metrics", ts.operatorKey(t), "")
	require.Equal(t, http.StatusOK, status)
	for _, line := range []string{
		`standmeet_webhook_attempts_total{class="5xx",outcome="retryable"} 1`,
		`standmeet_webhook_attempts_total{class="5xx",outcome="discarded"} 1`,
		`standmeet_webhook_attempts_total{class="timeout",outcome="discarded"} 1`,
		`standmeet_webhook_attempt_seconds_count{class="5xx"} 2`,
		`standmeet_webhook_attempt_seconds_count{class="timeout"} 1`,
		`standmeet_webhook_attempt_seconds_bucket{class="timeout",le="0.5"} 0`,
		`standmeet_webhook_attempt_seconds_bucket{class="timeout",le="2.5"} 1`,
	} {
		require.Contains(t, body, "\n"+line+"\n", "metrics")
	}
}
