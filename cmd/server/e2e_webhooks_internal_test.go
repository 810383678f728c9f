package main

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
)

// internalEventDrivers perform, as the owner whose account they get, the
// real action that records one Internal event type, keyed by that type. A
// domain whose type is Internal registers its driver here from its e2e
// file's init; once its catalog entry says `exposure: Webhook`, the driver
// moves to domainEventDrivers.
var internalEventDrivers = map[string]func(t *testing.T, ts *testServer, o testOwner){
	// The use case behind `standmeet owner grant-operator` and
	// `revoke-operator`.
	domain.EventOwnerOperatorChanged: func(t *testing.T, ts *testServer, o testOwner) {
		for _, grant := range []bool{true, false} {
			_, err := ts.App.Commands.Owners.SetOperator(context.Background(), o.Email, grant)
			require.NoError(t, err)
		}
	},
}

// TestInternalEventsNeverLeaveTheInstance drives every Internal type of the
// catalog by its real action while an endpoint subscribed to "*" listens,
// then publishes an external event behind them. The relay claims events in
// seq order, so once that event is delivered the Internal ones have been
// passed over: the endpoint received none of them, and no delivery of them
// was ever attempted.
func TestInternalEventsNeverLeaveTheInstance(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	o := ts.newOwnerAccount(t)
	rc := newReceiver(t, nil)
	ep := createEndpoint(t, ts, o.Key, map[string]any{"url": rc.URL, "event_types": []string{"*"}})

	var internal []string
	for _, et := range domain.EventTypes() {
		if et.Exposure == domain.Internal {
			internal = append(internal, et.Name)
		}
	}
	require.Contains(t, internal, domain.EventOwnerOperatorChanged)
	for _, name := range internal {
		drive, ok := internalEventDrivers[name]
		require.True(t, ok, "the Internal type %s has no driver in internalEventDrivers: add one", name)
		drive(t, ts, o)
	}
	recorded := func(name string) int {
		var n int
		require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
			`SELECT count(*) FROM events WHERE owner_id = $1 AND type = $2`, o.ID, name).Scan(&n))
		return n
	}
	for _, name := range internal {
		require.Positive(t, recorded(name), "the driver of %s records it", name)
	}

	// The marker: an external type, fanned out after the Internal events.
	marker, ok := domain.LookupEventType("booking.created")
	require.True(t, ok)
	body, err := json.Marshal(map[string]any{"type": marker.Name, "subject": marker.ExampleSubject, "data": json.RawMessage(marker.Example)})
	require.NoError(t, err)
	status, resp := ts.do(t, http.MethodPost, "/api/admin/events", o.Key, string(body))
	require.Equal(t, http.StatusAccepted, status, resp)

	types := func() []string {
		var out []string
		for _, r := range rc.requests() {
			var b thinBody
			if json.Unmarshal(r.Body, &b) == nil {
				out = append(out, b.Type)
			}
		}
		sort.Strings(out)
		return out
	}
	require.Eventually(t, func() bool {
		for _, ty := range types() {
			if ty == marker.Name {
				return true
			}
		}
		return false
	}, time.Minute, 20*time.Millisecond, "the marker event reaches the \"*\" endpoint")
	for _, name := range internal {
		require.NotContains(t, types(), name, "the Internal type %s left the instance", name)
		var attempts int
		require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
			`SELECT count(*) FROM webhook_attempts a JOIN events e ON e.id = a.event_id WHERE a.endpoint_id = $1 AND e.type = $2`,
			ep.ID, name).Scan(&attempts))
		require.Zero(t, attempts, "a delivery of the Internal type %s was attempted", name)
	}
	t.Logf("Internal types driven by real actions and kept inside: %d (%v)", len(internal), internal)
}
