package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWebhookDeliveryIsSignedThinAndVerifiable drives a real delivery (send
// test) and checks the wire format with an independent verifier: the
// Standard Webhooks headers, the user agent, the custom headers and the
// thin body.
func TestWebhookDeliveryIsSignedThinAndVerifiable(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	_, key := webhookOwner(t, ts)
	rc := newReceiver(t, nil)
	ep := createEndpoint(t, ts, key, map[string]any{
		"url": rc.URL + "/hook", "event_types": []string{"code.*"},
		"headers": map[string]string{"Authorization": "Bearer receiver-token", "X-Tenant": "t1"},
	})

	eventID, jobID := sendTest(t, ts, key, ep.ID)
	d := waitDelivery(t, ts, key, ep.ID, eventID, "completed")
	require.Equal(t, jobID, d.JobID)
	require.Equal(t, "webhook.test", d.EventType)
	require.Equal(t, 1, d.Attempt)
	require.Equal(t, 18, d.MaxAttempts)
	require.NotNil(t, d.StatusCode)
	require.Equal(t, http.StatusNoContent, *d.StatusCode)
	require.Equal(t, "/admin/tasks?job="+jsonNumber(d.JobID), d.TaskURL)

	reqs := rc.requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	id, err := verifySW(ep.Secret, r.Header, r.Body, time.Now())
	require.NoError(t, err)
	require.Equal(t, eventID.String(), id)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	require.True(t, strings.HasPrefix(r.Header.Get("User-Agent"), "StandMeet-Webhooks/"), r.Header.Get("User-Agent"))
	require.Equal(t, "Bearer receiver-token", r.Header.Get("Authorization"))
	require.Equal(t, "t1", r.Header.Get("X-Tenant"))

	var body thinBody
	require.NoError(t, json.Unmarshal(r.Body, &body))
	require.Equal(t, eventID.String(), body.ID)
	require.Equal(t, "webhook.test", body.Type)
	_, err = time.Parse(time.RFC3339Nano, body.OccurredAt)
	require.NoError(t, err)
	var data map[string]any
	require.NoError(t, json.Unmarshal(body.Data, &data))
	require.Equal(t, ep.ID.String(), data["endpoint_id"])
	// Thin: exactly the five fields.
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.Body, &fields))
	require.Len(t, fields, 5)
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
