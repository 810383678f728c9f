package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/events"
)

// webhookEnv is the environment of a server that may deliver to loopback
// receivers (STANDMEET_EGRESS_ALLOW set explicitly) with the retry schedule
// compressed by scale (1 = the real schedule).
func webhookEnv(scale float64) map[string]string {
	return map[string]string{
		"STANDMEET_EGRESS_ALLOW":          "127.0.0.0/8",
		"STANDMEET_WEBHOOK_BACKOFF_SCALE": strconv.FormatFloat(scale, 'f', -1, 64),
	}
}

// webhookOwner creates an owner with an API key through the owner domain.
// Issuing the key records api_key.issued: an endpoint subscribed to "*"
// created afterwards may well receive it.
func webhookOwner(t *testing.T, ts *testServer) (uuid.UUID, string) {
	t.Helper()
	return ts.newOwner(t)
}

// received is one request a receiver got.
type received struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// receiver is a loopback webhook receiver. Its handler answers request n
// (0-based); it records every request and the most requests it ever had in
// flight at once.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	reqs     []received
	inFlight atomic.Int64
	maxSeen  atomic.Int64
	answer   func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur := rc.inFlight.Add(1)
		defer rc.inFlight.Add(-1)
		for {
			prev := rc.maxSeen.Load()
			if cur <= prev || rc.maxSeen.CompareAndSwap(prev, cur) {
				break
			}
		}
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.reqs)
		rc.reqs = append(rc.reqs, received{Header: r.Header.Clone(), Body: body, At: time.Now()})
		rc.mu.Unlock()
		if rc.answer != nil {
			rc.answer(n, w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.reqs...)
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.reqs)
}

// createdEndpoint is the answer of webhooks.create.
type createdEndpoint struct {
	ID             uuid.UUID         `json:"id"`
	URL            string            `json:"url"`
	EventTypes     []string          `json:"event_types"`
	Headers        map[string]string `json:"headers"`
	Enabled        bool              `json:"enabled"`
	DisabledReason *string           `json:"disabled_reason"`
	FailingSince   *time.Time        `json:"failing_since"`
	MaxInFlight    int               `json:"max_in_flight"`
	Secret         string            `json:"secret"`
}

// createEndpoint posts body to webhooks.create and requires a 201.
func createEndpoint(t *testing.T, ts *testServer, key string, body map[string]any) createdEndpoint {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	status, resp := ts.do(t, http.MethodPost, "/api/admin/webhooks", key, string(b))
	require.Equal(t, http.StatusCreated, status, resp)
	var ep createdEndpoint
	require.NoError(t, json.Unmarshal([]byte(resp), &ep))
	require.True(t, strings.HasPrefix(ep.Secret, "whsec_"), resp)
	return ep
}

// getEndpoint reads an endpoint through the API.
func getEndpoint(t *testing.T, ts *testServer, key string, id uuid.UUID) createdEndpoint {
	t.Helper()
	status, resp := ts.do(t, http.MethodGet, "/api/admin/webhooks/"+id.String(), key, "")
	require.Equal(t, http.StatusOK, status, resp)
	var ep createdEndpoint
	require.NoError(t, json.Unmarshal([]byte(resp), &ep))
	return ep
}

// deliveryRow is a row of webhooks.deliveries.
type deliveryRow struct {
	JobID       int64     `json:"job_id"`
	EventID     uuid.UUID `json:"event_id"`
	EventType   string    `json:"event_type"`
	State       string    `json:"state"`
	Attempt     int       `json:"attempt"`
	MaxAttempts int       `json:"max_attempts"`
	LastError   *string   `json:"last_error"`
	TaskURL     string    `json:"task_url"`
	StatusCode  *int      `json:"status_code"`
	LatencyMS   *int      `json:"latency_ms"`
	Response    *string   `json:"response"`
	Location    *string   `json:"location"`
	Snoozes     int       `json:"snoozes"`
	ScheduledAt time.Time `json:"scheduled_at"`
}

// deliveries reads the endpoint's delivery log (first page of 200).
func deliveries(t *testing.T, ts *testServer, key string, id uuid.UUID) []deliveryRow {
	t.Helper()
	status, resp := ts.do(t, http.MethodGet, "/api/admin/webhooks/"+id.String()+"/deliveries?limit=200", key, "")
	require.Equal(t, http.StatusOK, status, resp)
	var page struct {
		Data []deliveryRow `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp), &page))
	return page.Data
}

// waitDelivery waits until the delivery of eventID to the endpoint is in
// one of states, and returns it.
func waitDelivery(t *testing.T, ts *testServer, key string, endpointID, eventID uuid.UUID, states ...string) deliveryRow {
	t.Helper()
	var got deliveryRow
	require.Eventually(t, func() bool {
		for _, d := range deliveries(t, ts, key, endpointID) {
			if d.EventID == eventID {
				got = d
				for _, s := range states {
					if d.State == s {
						return true
					}
				}
			}
		}
		return false
	}, 60*time.Second, 20*time.Millisecond, "delivery of %s never reached %v (last %+v)", eventID, states, got)
	return got
}

// recordEvent records an event as a use case would, in its own transaction.
func recordEvent(t *testing.T, ts *testServer, ownerID uuid.UUID, eventType, subject string, data any) uuid.UUID {
	t.Helper()
	rec := events.NewRecorder(func(name string) bool { _, ok := domain.LookupEventType(name); return ok }, nil)
	var id uuid.UUID
	err := pgx.BeginFunc(context.Background(), ts.App.Pool, func(tx pgx.Tx) error {
		var err error
		id, err = rec.With(tx).Record(context.Background(), ownerID, eventType, subject, data)
		return err
	})
	require.NoError(t, err)
	return id
}

// sendTest calls webhooks.send_test and returns the event and job ids.
func sendTest(t *testing.T, ts *testServer, key string, id uuid.UUID) (uuid.UUID, int64) {
	t.Helper()
	status, resp := ts.do(t, http.MethodPost, "/api/admin/webhooks/"+id.String()+"/test", key, "")
	require.Equal(t, http.StatusAccepted, status, resp)
	var out struct {
		EventID uuid.UUID `json:"event_id"`
		JobID   int64     `json:"job_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp), &out))
	require.NotZero(t, out.JobID)
	return out.EventID, out.JobID
}

// verifySW is an independent Standard Webhooks verifier, written from the
// specification (https://www.standardwebhooks.com, "Verifying webhook
// authenticity") rather than with the package under test: the key is the
// base64 part of the whsec_ secret; the signed content is
// "<webhook-id>.<webhook-timestamp>.<body>"; webhook-signature is a
// space-separated list of "v1,<base64 HMAC-SHA256>"; the timestamp must be
// within five minutes. It returns the message id.
func verifySW(secret string, h http.Header, body []byte, now time.Time) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return "", fmt.Errorf("secret: %w", err)
	}
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return "", fmt.Errorf("missing webhook-* headers")
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "", fmt.Errorf("timestamp: %w", err)
	}
	if d := now.Sub(time.Unix(secs, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return "", fmt.Errorf("timestamp out of tolerance by %s", d)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range strings.Split(sigs, " ") {
		v, sig, ok := strings.Cut(s, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return id, nil
		}
	}
	return "", fmt.Errorf("no signature matches")
}

// thinBody is the wire format of a delivery.
type thinBody struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Subject    string          `json:"subject"`
	OccurredAt string          `json:"occurred_at"`
	Data       json.RawMessage `json:"data"`
}

// dbExec runs SQL against the server's database (tests reach into state
// they cannot drive through the API, such as time).
func dbExec(t *testing.T, ts *testServer, sql string, args ...any) {
	t.Helper()
	_, err := ts.App.Pool.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// TestIndependentVerifierPassesTheSpecVector checks the test's own verifier
// against the Standard Webhooks test vector (the one every reference
// library tests, e.g. standard-webhooks/standard-webhooks
// libraries/go/webhooks_test.go), so a delivery it accepts is one any
// official library accepts.
func TestIndependentVerifierPassesTheSpecVector(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	at := time.Unix(1614265330, 0)
	id, err := verifySW(secret, h, []byte(`{"test": 2432232314}`), at)
	require.NoError(t, err)
	require.Equal(t, "msg_p5jXN8AQM9LWM0D4loKWxJek", id)
	_, err = verifySW(secret, h, []byte(`{"test": 2432232315}`), at)
	require.Error(t, err, "a changed body fails")
	_, err = verifySW(secret, h, []byte(`{"test": 2432232314}`), at.Add(6*time.Minute))
	require.Error(t, err, "a stale timestamp fails")
	h.Set("webhook-signature", "v1,bogus v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	_, err = verifySW(secret, h, []byte(`{"test": 2432232314}`), at)
	require.NoError(t, err, "any one of several signatures may match")
}
