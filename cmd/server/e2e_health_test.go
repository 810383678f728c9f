package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/inbounddb"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// opEvent is an operational event as a receiver got it.
type opEvent struct {
	Type string `json:"type"`
	Data struct {
		EndpointID   uuid.UUID `json:"endpoint_id"`
		SourceID     uuid.UUID `json:"source_id"`
		MessageID    uuid.UUID `json:"message_id"`
		Attempts     int       `json:"attempts"`
		Reason       string    `json:"reason"`
		FailingSince string    `json:"failing_since"`
	} `json:"data"`
}

// opEvents are the operational events (webhook.endpoint.*,
// inbound.message.*) rc received.
func opEvents(t *testing.T, rc *receiver) []opEvent {
	t.Helper()
	var out []opEvent
	for _, r := range rc.requests() {
		var e opEvent
		require.NoError(t, json.Unmarshal(r.Body, &e))
		switch e.Type {
		case domain.EventWebhookEndpointFailing, domain.EventWebhookEndpointRecovered, domain.EventWebhookEndpointDisabled,
			domain.EventInboundMessageDeadLettered:
			out = append(out, e)
		}
	}
	return out
}

// alertEndpoint is an endpoint of the owner subscribed to the operational
// events, answering 204.
func alertEndpoint(t *testing.T, ts *testServer, key string) (*receiver, createdEndpoint) {
	t.Helper()
	rc := newReceiver(t, nil)
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL,
		"event_types": []string{"webhook.endpoint.*", domain.EventInboundMessageDeadLettered}})
	return rc, ep
}

// TestHealthEventsOfAFailingThenRecoveredEndpointGoToTheAlertEndpointOnly:
// a receiver that fails twice and then accepts makes exactly one failing
// and one recovered event, delivered to the owner's alert endpoint, and
// none to itself though it subscribes to them.
func TestHealthEventsOfAFailingThenRecoveredEndpointGoToTheAlertEndpointOnly(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1000)})
	_, key := webhookOwner(t, ts)
	alert, _ := alertEndpoint(t, ts, key)
	flaky := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n < 2 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ep := createEndpoint(t, ts, key, map[string]any{"url": flaky.URL, "event_types": []string{"code.*", "webhook.endpoint.*"}})
	eventID, _ := sendTest(t, ts, key, ep.ID)
	d := waitDelivery(t, ts, key, ep.ID, eventID, "completed")
	require.Equal(t, 3, d.Attempt)

	require.Eventually(t, func() bool { return len(opEvents(t, alert)) >= 2 }, 30*time.Second, 20*time.Millisecond)
	// Anything more would have been recorded with the two: give its
	// delivery the time the two took.
	time.Sleep(500 * time.Millisecond)
	got := opEvents(t, alert)
	require.Len(t, got, 2, "exactly one failing and one recovered")
	require.Equal(t, domain.EventWebhookEndpointFailing, got[0].Type)
	require.Equal(t, domain.EventWebhookEndpointRecovered, got[1].Type)
	for _, e := range got {
		require.Equal(t, ep.ID, e.Data.EndpointID)
	}
	require.Empty(t, opEvents(t, flaky), "an endpoint never hears about itself")
	var recorded int
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(), `SELECT count(*) FROM events
WHERE type LIKE 'webhook.endpoint.%' AND data->>'endpoint_id' = $1`, ep.ID.String()).Scan(&recorded))
	require.Equal(t, 2, recorded)
}

// TestHealthEventDisabledAfterFiveDaysOfFailure: with the endpoint's
// failure streak moved five days back, its next failure disables it and
// the alert endpoint gets webhook.endpoint.disabled with the reason.
func TestHealthEventDisabledAfterFiveDaysOfFailure(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1000)})
	_, key := webhookOwner(t, ts)
	alert, _ := alertEndpoint(t, ts, key)
	dead := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	ep := createEndpoint(t, ts, key, map[string]any{"url": dead.URL, "event_types": []string{"code.*", "webhook.endpoint.*"}})
	dbExec(t, ts, `UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1`, ep.ID)
	sendTest(t, ts, key, ep.ID)
	require.Eventually(t, func() bool { return len(opEvents(t, alert)) >= 1 }, 30*time.Second, 20*time.Millisecond)
	got := opEvents(t, alert)
	require.Len(t, got, 1)
	require.Equal(t, domain.EventWebhookEndpointDisabled, got[0].Type)
	require.Equal(t, ep.ID, got[0].Data.EndpointID)
	require.Contains(t, got[0].Data.Reason, "failed continuously")
	require.NotEmpty(t, got[0].Data.FailingSince)
	require.False(t, getEndpoint(t, ts, key, ep.ID).Enabled)
	require.Empty(t, opEvents(t, dead))
}

// TestHealthEventDeadLetteredReachesTheAlertEndpoint: an inbound message
// that fails permanently becomes a dead letter through the real adapters,
// and the real server's relay and delivery bring its
// inbound.message.dead_lettered to the alert endpoint. The real server's
// only handler does not fail on demand, so the processor runs here with a
// handler that does, on a message without a job of the server's.
func TestHealthEventDeadLetteredReachesTheAlertEndpoint(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1000)})
	owner, key := ts.newOwner(t)
	alert, _ := alertEndpoint(t, ts, key)
	src := createInboundSource(t, ts, key, "")
	id := deadLetterThroughTheAdapters(t, ts, owner, src.ID)

	require.Eventually(t, func() bool { return len(opEvents(t, alert)) >= 1 }, 30*time.Second, 20*time.Millisecond)
	got := opEvents(t, alert)
	require.Len(t, got, 1)
	require.Equal(t, domain.EventInboundMessageDeadLettered, got[0].Type)
	require.Equal(t, src.ID, got[0].Data.SourceID.String())
	require.Equal(t, id, got[0].Data.MessageID)
	require.Equal(t, 1, got[0].Data.Attempts)
}

// TestHealthDeliveryLogOfAThreeAttemptEndpointSaysThree: the log and
// jobs.get show the endpoint's bound, and the delivery the worker ended at
// the third attempt reads failed after 3 of 3 attempts, in the API and on
// the page.
func TestHealthDeliveryLogOfAThreeAttemptEndpointSaysThree(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1000)})
	o := ts.newOwnerAccount(t)
	key := o.Key
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}, "max_attempts": 3})
	eventID, jobID := sendTest(t, ts, key, ep.ID)
	d := waitDelivery(t, ts, key, ep.ID, eventID, "cancelled", "discarded")
	require.Equal(t, 3, d.Attempt)
	require.Equal(t, 3, d.MaxAttempts)
	var det struct {
		Status  string `json:"status"`
		Summary string `json:"summary"`
	}
	getJSON(t, ts, key, fmt.Sprintf("/api/admin/webhooks/%s/deliveries/%d", ep.ID, jobID), http.StatusOK, &det)
	require.Equal(t, "failed", det.Status, "ended by the endpoint's bound, not cancelled by anyone")
	require.Equal(t, "failed after 3 of 3 attempts", det.Summary)
	var failed struct {
		Data []deliveryRow `json:"data"`
	}
	getJSON(t, ts, key, "/api/admin/webhooks/"+ep.ID.String()+"/deliveries?state=failed", http.StatusOK, &failed)
	require.Len(t, failed.Data, 1, "the failed filter finds it")
	var job struct {
		MaxAttempts int `json:"max_attempts"`
	}
	getJSON(t, ts, key, "/api/admin/jobs/"+strconv.FormatInt(jobID, 10), http.StatusOK, &job)
	require.Equal(t, 3, job.MaxAttempts)
	var ev struct {
		Data []struct {
			MaxAttempts int    `json:"max_attempts"`
			Summary     string `json:"summary"`
		} `json:"data"`
	}
	getJSON(t, ts, key, "/api/admin/events/"+eventID.String()+"/deliveries", http.StatusOK, &ev)
	require.Len(t, ev.Data, 1)
	require.Equal(t, 3, ev.Data[0].MaxAttempts)
	require.Equal(t, "failed after 3 of 3 attempts", ev.Data[0].Summary)

	// The pages say the same.
	ui := signIn(t, ts, o)
	for _, page := range []string{"/admin/webhooks/" + ep.ID.String(), fmt.Sprintf("/admin/webhooks/%s/deliveries/%d", ep.ID, jobID),
		"/admin/events/" + eventID.String()} {
		status, body, _ := ui.get(t, page)
		require.Equal(t, http.StatusOK, status, page)
		require.Contains(t, body, "3 of 3", page)
		require.NotContains(t, body, "of 18", page)
		require.Contains(t, body, "failed after 3 of 3 attempts", page)
	}
}

// statsOut is webhooks.stats' answer.
type statsOut struct {
	Window  string `json:"window"`
	Buckets []struct {
		At        time.Time `json:"at"`
		Succeeded int       `json:"succeeded"`
		Retrying  int       `json:"retrying"`
		GaveUp    int       `json:"gave_up"`
		P50MS     *int      `json:"p50_ms"`
		P99MS     *int      `json:"p99_ms"`
	} `json:"buckets"`
}

func (s statsOut) sums() (succeeded, retrying, gaveUp int) {
	for _, b := range s.Buckets {
		succeeded, retrying, gaveUp = succeeded+b.Succeeded, retrying+b.Retrying, gaveUp+b.GaveUp
	}
	return
}

// TestHealthStatsCountTheOwnersAttemptsByOutcome: the charts' figures are
// the attempts' outcomes, per owner and per endpoint, every bucket listed;
// a bad window is a 400 and another owner's endpoint is not found.
func TestHealthStatsCountTheOwnersAttemptsByOutcome(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1000)})
	_, key := webhookOwner(t, ts)
	_, otherKey := webhookOwner(t, ts)
	ok := newReceiver(t, nil)
	bad := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	good := createEndpoint(t, ts, key, map[string]any{"url": ok.URL, "event_types": []string{"code.*"}})
	failing := createEndpoint(t, ts, key, map[string]any{"url": bad.URL, "event_types": []string{"code.*"}, "max_attempts": 2})
	for range 3 {
		e, _ := sendTest(t, ts, key, good.ID)
		waitDelivery(t, ts, key, good.ID, e, "completed")
	}
	e, _ := sendTest(t, ts, key, failing.ID)
	waitDelivery(t, ts, key, failing.ID, e, "cancelled", "discarded")

	for _, w := range []struct {
		name    string
		buckets int
	}{{"hour", 12}, {"day", 24}, {"week", 28}} {
		var all statsOut
		getJSON(t, ts, key, "/api/admin/webhooks/stats?window="+w.name, http.StatusOK, &all)
		require.Len(t, all.Buckets, w.buckets, w.name)
		s, r, g := all.sums()
		require.Equal(t, [3]int{3, 1, 1}, [3]int{s, r, g}, w.name)
	}
	var one statsOut
	getJSON(t, ts, key, "/api/admin/webhooks/"+good.ID.String()+"/stats?window=hour", http.StatusOK, &one)
	s, r, g := one.sums()
	require.Equal(t, [3]int{3, 0, 0}, [3]int{s, r, g})
	// The attempts may straddle a bucket boundary: every bucket holding
	// answered attempts has a latency, and an empty one has none.
	for _, b := range one.Buckets {
		if b.Succeeded+b.Retrying+b.GaveUp > 0 {
			require.NotNil(t, b.P50MS, "answered attempts have a latency (bucket %s)", b.At)
		} else {
			require.Nil(t, b.P50MS, "an empty bucket has no latency (bucket %s)", b.At)
		}
	}

	var theirs statsOut
	getJSON(t, ts, otherKey, "/api/admin/webhooks/stats?window=hour", http.StatusOK, &theirs)
	s, r, g = theirs.sums()
	require.Equal(t, [3]int{0, 0, 0}, [3]int{s, r, g}, "another owner's charts hold none of these")
	getJSON(t, ts, otherKey, "/api/admin/webhooks/"+good.ID.String()+"/stats", http.StatusNotFound, nil)
	body := getJSON(t, ts, key, "/api/admin/webhooks/stats?window=month", http.StatusBadRequest, nil)
	require.Contains(t, body, "INVALID_WINDOW")

	var att struct {
		Data []struct {
			EndpointID uuid.UUID `json:"endpoint_id"`
			State      string    `json:"state"`
			Alarm      bool      `json:"alarm"`
		} `json:"data"`
	}
	getJSON(t, ts, key, "/api/admin/webhooks/attention", http.StatusOK, &att)
	require.Len(t, att.Data, 1)
	require.Equal(t, failing.ID, att.Data[0].EndpointID)
	require.Equal(t, "failing", att.Data[0].State)
	require.False(t, att.Data[0].Alarm, "failing for less than an hour")
	dbExec(t, ts, `UPDATE webhook_endpoints SET failing_since = now() - interval '61 minutes' WHERE id = $1`, failing.ID)
	getJSON(t, ts, key, "/api/admin/webhooks/attention", http.StatusOK, &att)
	require.True(t, att.Data[0].Alarm, "failing for an hour")
	getJSON(t, ts, otherKey, "/api/admin/webhooks/attention", http.StatusOK, &att)
	require.Empty(t, att.Data)
}

// TestHealthInboundStatsCountAcceptedRefusedAndDead: accepted messages,
// refusals and dead letters in the window, and the dead letters waiting.
func TestHealthInboundStatsCountAcceptedRefusedAndDead(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	owner, key := ts.newOwner(t)
	_, otherKey := ts.newOwner(t)
	src := createInboundSource(t, ts, key, "")
	for i := range 4 {
		state, dead := "done", "NULL"
		if i == 3 {
			state, dead = "dead", "now()"
		}
		_, err := ts.App.Pool.Exec(context.Background(), `INSERT INTO inbound_messages
			(id, owner_id, source_id, message_id, message_id_signed, payload_sha256, body, received_at, state, attempts, dead_at)
			VALUES ($1, $2, $3, $4, true, sha256($5::bytea), $5::bytea, now(), $6, 1, `+dead+`)`,
			uuid.Must(uuid.NewV7()), owner, src.ID, "m"+strconv.Itoa(i), []byte(`{"i":`+strconv.Itoa(i)+`}`), state)
		require.NoError(t, err)
	}
	dbExec(t, ts, `INSERT INTO inbound_refusals (owner_id, source_id, refused_at, reason, detail)
		VALUES ($1, $2, now(), 'WEBHOOK_SIGNATURE_INVALID', 'x'), ($1, $2, now(), 'WEBHOOK_STALE', 'y')`, owner, src.ID)
	type out struct {
		Buckets []struct {
			Accepted     int `json:"accepted"`
			Refused      int `json:"refused"`
			DeadLettered int `json:"dead_lettered"`
		} `json:"buckets"`
		DeadLetters []struct {
			SourceID string `json:"source_id"`
			Waiting  int    `json:"waiting"`
		} `json:"dead_letters"`
	}
	sum := func(o out) [3]int {
		var s [3]int
		for _, b := range o.Buckets {
			s[0], s[1], s[2] = s[0]+b.Accepted, s[1]+b.Refused, s[2]+b.DeadLettered
		}
		return s
	}
	var all, one, theirs out
	getJSON(t, ts, key, "/api/admin/inbound-sources/stats?window=hour", http.StatusOK, &all)
	require.Len(t, all.Buckets, 12)
	require.Equal(t, [3]int{4, 2, 1}, sum(all))
	require.Len(t, all.DeadLetters, 1)
	require.Equal(t, src.ID, all.DeadLetters[0].SourceID)
	require.Equal(t, 1, all.DeadLetters[0].Waiting)
	getJSON(t, ts, key, "/api/admin/inbound-sources/"+src.ID+"/stats", http.StatusOK, &one)
	require.Equal(t, [3]int{4, 2, 1}, sum(one))
	getJSON(t, ts, otherKey, "/api/admin/inbound-sources/stats", http.StatusOK, &theirs)
	require.Equal(t, [3]int{0, 0, 0}, sum(theirs))
	require.Empty(t, theirs.DeadLetters)
	getJSON(t, ts, otherKey, "/api/admin/inbound-sources/"+src.ID+"/stats", http.StatusNotFound, nil)
	body := getJSON(t, ts, key, "/api/admin/inbound-sources/"+src.ID+"/stats?window=year", http.StatusBadRequest, nil)
	require.Contains(t, body, "INVALID_WINDOW")
}

// TestHealthTypesAreInTheCatalogAndTheOpenAPIDocument: the four
// operational types are listed by webhooks.event_types and described under
// the OpenAPI document's webhooks, with their schema.
func TestHealthTypesAreInTheCatalogAndTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	_, key := ts.newOwner(t)
	var types struct {
		Data []struct {
			Name       string          `json:"name"`
			DataSchema json.RawMessage `json:"data_schema"`
		} `json:"data"`
	}
	getJSON(t, ts, key, "/api/admin/webhooks/event-types", http.StatusOK, &types)
	listed := map[string]bool{}
	for _, et := range types.Data {
		listed[et.Name] = true
	}
	status, doc := ts.do(t, http.MethodGet, "/api/openapi.json", "", "")
	require.Equal(t, http.StatusOK, status)
	var spec struct {
		Webhooks map[string]any `json:"webhooks"`
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &spec))
	for _, name := range []string{domain.EventWebhookEndpointFailing, domain.EventWebhookEndpointRecovered,
		domain.EventWebhookEndpointDisabled, domain.EventInboundMessageDeadLettered} {
		require.True(t, listed[name], "webhooks.event_types lists %s", name)
		require.Contains(t, spec.Webhooks, name, "the OpenAPI document describes %s", name)
	}
}

// The operational types' drivers for TestWebhookEventTypes: each makes the
// real state change that records its type. Their events reach the test's
// "*" endpoint, which is never the endpoint they are about.
func init() {
	flakyOnce := func(t *testing.T, ts *testServer, key string, answers ...int) createdEndpoint {
		t.Helper()
		rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
			code := http.StatusNoContent
			if n < len(answers) {
				code = answers[n]
			}
			w.WriteHeader(code)
		})
		return createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"code.*"}})
	}
	// Failing on the first attempt (and recovered on the retry).
	domainEventDrivers[domain.EventWebhookEndpointFailing] = func(t *testing.T, ts *testServer, key string) {
		ep := flakyOnce(t, ts, key, http.StatusInternalServerError)
		sendTest(t, ts, key, ep.ID)
	}
	domainEventDrivers[domain.EventWebhookEndpointRecovered] = func(t *testing.T, ts *testServer, key string) {
		// Failing for a minute: the test's delivery succeeds and ends it.
		ep := flakyOnce(t, ts, key)
		dbExec(t, ts, `UPDATE webhook_endpoints SET failing_since = now() - interval '1 minute' WHERE id = $1`, ep.ID)
		sendTest(t, ts, key, ep.ID)
	}
	domainEventDrivers[domain.EventWebhookEndpointDisabled] = func(t *testing.T, ts *testServer, key string) {
		ep := flakyOnce(t, ts, key, http.StatusServiceUnavailable)
		dbExec(t, ts, `UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1`, ep.ID)
		sendTest(t, ts, key, ep.ID)
	}
	domainEventDrivers[domain.EventInboundMessageDeadLettered] = func(t *testing.T, ts *testServer, key string) {
		src := createInboundSource(t, ts, key, "")
		var owner uuid.UUID
		require.NoError(t, ts.App.Pool.QueryRow(context.Background(), `SELECT owner_id FROM inbound_sources WHERE id = $1`, src.ID).Scan(&owner))
		deadLetterThroughTheAdapters(t, ts, owner, src.ID)
	}
}

// deadLetterThroughTheAdapters stores a message of the source and makes it
// a dead letter with the real adapters and Recorder, through a processor
// whose handler refuses it for good (the server's own handler does not fail
// on demand). It returns the message's id.
func deadLetterThroughTheAdapters(t *testing.T, ts *testServer, owner uuid.UUID, sourceID string) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	_, err := ts.App.Pool.Exec(context.Background(), `INSERT INTO inbound_messages
		(id, owner_id, source_id, message_id, message_id_signed, payload_sha256, body, received_at, state, attempts)
		VALUES ($1, $2, $3, $4, true, sha256($5::bytea), $5::bytea, now(), 'received', 0)`, id, owner, sourceID, "msg_"+id.String(), []byte(`{"type":"order.created"}`))
	require.NoError(t, err)
	rec := events.NewRecorder(func(name string) bool { _, ok := domain.LookupEventType(name); return ok }, nil)
	router, err := inbound.NewRouter(inbound.Route{Name: "refuses", Kind: "standard-webhooks", EventType: "*",
		Handler: inbound.HandlerFunc(func(context.Context, inbound.Message) error {
			return inbound.Permanent(errors.New("unknown product"))
		})})
	require.NoError(t, err)
	proc := inbound.NewProcessor(inbound.ProcessorDeps{Inbox: inbounddb.New(ts.App.Pool, nil).States(), Router: router,
		DeadLetters: inbounddb.NewDeadLetters(ts.App.Pool, func(tx pgx.Tx) domain.Recorder { return rec.With(tx) })})
	out, err := proc.Process(context.Background(), id, inbound.Job{ID: 1, Attempt: 1, MaxAttempts: 5})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeDead, out.Kind)
	return id
}
