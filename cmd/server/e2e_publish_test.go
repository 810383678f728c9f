package main

// events.publish and events.publish_batch end to end: the refusals (each
// leaving no event), idempotency (one event, one delivery per endpoint),
// the batch's all or nothing, the per-key rate limit, and owner isolation of
// what is published.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// publishBody is a valid booking.created event, with an optional key.
func publishBody(bookingID, key string) string {
	m := map[string]any{
		"type": "booking.created", "subject": "booking://" + bookingID,
		"data": map[string]any{"booking_id": bookingID, "starts_at": "2026-12-08T09:30:00Z"},
	}
	if key != "" {
		m["idempotency_key"] = key
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// eventCount counts the owner's events (of eventType, when set).
func eventCount(t *testing.T, ts *testServer, ownerID uuid.UUID, eventType string) int {
	t.Helper()
	var n int
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM events WHERE owner_id = $1 AND ($2 = '' OR type = $2)`, ownerID, eventType).Scan(&n))
	return n
}

// errorCode returns the contract error shape's code.
func errorCode(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	return e.Error.Code
}

func TestPublishRefusalsRecordNothing(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	owner := ts.newOwnerAccount(t)
	with := func(f func(m map[string]any)) string {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(publishBody("b_1", "")), &m))
		f(m)
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return string(b)
	}
	for _, tc := range []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"undeclared type", with(func(m map[string]any) { m["type"] = "booking.exploded" }), http.StatusBadRequest, "UNKNOWN_EVENT_TYPE"},
		{"internal type", with(func(m map[string]any) {
			m["type"] = domain.EventOwnerLogin
			m["subject"] = "owner/" + owner.ID.String()
			m["data"] = map[string]any{"owner_id": owner.ID, "session_id": uuid.New()}
		}), http.StatusForbidden, "EVENT_TYPE_NOT_PUBLISHABLE"},
		{"ip ban forged", with(func(m map[string]any) { m["type"] = domain.EventIPBanAdded }), http.StatusForbidden, "EVENT_TYPE_NOT_PUBLISHABLE"},
		{"bad subject", with(func(m map[string]any) { m["subject"] = "just some words" }), http.StatusBadRequest, "INVALID_SUBJECT"},
		{"oversized data", with(func(m map[string]any) {
			m["data"] = map[string]any{"booking_id": "b_1", "starts_at": "2026-12-08T09:30:00Z", "pad": strings.Repeat("x", 5000)}
		}), http.StatusRequestEntityTooLarge, "DATA_TOO_LARGE"},
		{"non-object data", with(func(m map[string]any) { m["data"] = []string{"b_1"} }), http.StatusBadRequest, "DATA_NOT_OBJECT"},
		{"data off its schema", with(func(m map[string]any) { m["data"] = map[string]any{"booking_id": 41} }), http.StatusUnprocessableEntity, "DATA_SCHEMA_MISMATCH"},
		{"bad idempotency key", with(func(m map[string]any) { m["idempotency_key"] = "has spaces" }), http.StatusBadRequest, "INVALID_IDEMPOTENCY_KEY"},
		{"unknown field", with(func(m map[string]any) { m["occurred"] = "now" }), http.StatusBadRequest, "INVALID_JSON"},
		{"body over the route's limit", `{"type":"booking.created","subject":"booking://b_1","data":{"booking_id":"` + strings.Repeat("x", 70<<10) + `"}}`,
			http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := eventCount(t, ts, owner.ID, "")
			status, body := ts.do(t, http.MethodPost, "/api/admin/events", owner.Key, tc.body)
			require.Equal(t, tc.status, status, body)
			require.Equal(t, tc.code, errorCode(t, body), body)
			require.Equal(t, before, eventCount(t, ts, owner.ID, ""), "a refused publish records nothing")
		})
	}
}

func TestPublishRateLimitAnswers429WithRetryAfter(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_PUBLISH_RATE": "1"}})
	owner := ts.newOwnerAccount(t)
	// The bucket holds one full batch; a batch of 100 empties it.
	items := make([]json.RawMessage, 100)
	for i := range items {
		items[i] = json.RawMessage(publishBody(fmt.Sprintf("b_%d", i), ""))
	}
	batch, err := json.Marshal(map[string]any{"events": items})
	require.NoError(t, err)
	status, body := ts.do(t, http.MethodPost, "/api/admin/events/batch", owner.Key, string(batch))
	require.Equal(t, http.StatusAccepted, status, body)
	before := eventCount(t, ts, owner.ID, "booking.created")
	require.Equal(t, 100, before)

	req, err := http.NewRequest(http.MethodPost, ts.URL+"/api/admin/events", strings.NewReader(publishBody("b_over", "")))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+owner.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, string(b))
	require.Equal(t, "RATE_LIMITED", errorCode(t, string(b)))
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.Equal(t, before, eventCount(t, ts, owner.ID, "booking.created"), "a limited publish records nothing")

	// The limit is per key: another key of the same owner is not limited.
	k, err := ts.App.Commands.Owners.IssueAPIKey(context.Background(), owner.ID, "second")
	require.NoError(t, err)
	status, body = ts.do(t, http.MethodPost, "/api/admin/events", k.Key, publishBody("b_other_key", ""))
	require.Equal(t, http.StatusAccepted, status, body)
}

// publishOut is the answer of events.publish.
type publishOut struct {
	ID        uuid.UUID `json:"id"`
	Duplicate bool      `json:"duplicate"`
}

func TestPublishIdempotencyOneEventOneDeliveryPerEndpoint(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	owner := ts.newOwnerAccount(t)
	rc1, rc2 := newReceiver(t, nil), newReceiver(t, nil)
	ep1 := createEndpoint(t, ts, owner.Key, map[string]any{"url": rc1.URL, "event_types": []string{"*"}})
	ep2 := createEndpoint(t, ts, owner.Key, map[string]any{"url": rc2.URL, "event_types": []string{"booking.*"}})

	status, body := ts.do(t, http.MethodPost, "/api/admin/events", owner.Key, publishBody("b_1", "order-1"))
	require.Equal(t, http.StatusAccepted, status, body)
	var first publishOut
	require.NoError(t, json.Unmarshal([]byte(body), &first))
	require.False(t, first.Duplicate)

	// The same request again: the first event, 200.
	status, body = ts.do(t, http.MethodPost, "/api/admin/events", owner.Key, publishBody("b_1", "order-1"))
	require.Equal(t, http.StatusOK, status, body)
	var again publishOut
	require.NoError(t, json.Unmarshal([]byte(body), &again))
	require.Equal(t, publishOut{ID: first.ID, Duplicate: true}, again)
	// In a batch too.
	status, body = ts.do(t, http.MethodPost, "/api/admin/events/batch", owner.Key, `{"events":[`+publishBody("b_1", "order-1")+`]}`)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, first.ID.String())
	// The same key for another booking: 409 naming the first event, alone or in a batch.
	status, body = ts.do(t, http.MethodPost, "/api/admin/events", owner.Key, publishBody("b_2", "order-1"))
	require.Equal(t, http.StatusConflict, status, body)
	require.Contains(t, body, `"code":"IDEMPOTENCY_KEY_REUSED"`)
	require.Contains(t, body, first.ID.String())
	status, body = ts.do(t, http.MethodPost, "/api/admin/events/batch", owner.Key, `{"events":[`+publishBody("b_4", "")+`,`+publishBody("b_3", "order-1")+`]}`)
	require.Equal(t, http.StatusConflict, status, body)
	require.Contains(t, body, `"field":"events[1].idempotency_key"`)
	require.Equal(t, 1, eventCount(t, ts, owner.ID, "booking.created"), "a refused request records nothing")

	for _, ep := range []createdEndpoint{ep1, ep2} {
		waitDelivery(t, ts, owner.Key, ep.ID, first.ID, "completed")
	}
	for _, rc := range []*receiver{rc1, rc2} {
		n := 0
		for _, r := range rc.requests() {
			var b thinBody
			require.NoError(t, json.Unmarshal(r.Body, &b))
			if b.Type == "booking.created" {
				n++
				require.Equal(t, first.ID.String(), b.ID)
				require.Equal(t, "booking://b_1", b.Subject, "the first body, not the replay's")
			}
		}
		require.Equal(t, 1, n, "one delivery per endpoint")
	}
	require.Len(t, listJobs(t, ts, jobsOfKind(delivery.KindDeliver), forEvents(first.ID)), 2, "one delivery job per endpoint")
}

func TestPublishBatchAllOrNothing(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	owner := ts.newOwnerAccount(t)
	rc := newReceiver(t, nil)
	ep := createEndpoint(t, ts, owner.Key, map[string]any{"url": rc.URL, "event_types": []string{"booking.*", "page.*"}})

	good := []string{publishBody("b_1", ""), publishBody("b_2", "k2"),
		`{"type":"page.unpublished","subject":"microsite://pages/p_home","data":{"page_id":"p_home"}}`}
	bad := append(append([]string(nil), good...), `{"type":"owner.login","subject":"owner/x","data":{}}`, `{"type":"booking.cancelled","subject":"nope","data":{"booking_id":"b_1"}}`)
	status, body := ts.do(t, http.MethodPost, "/api/admin/events/batch", owner.Key, `{"events":[`+strings.Join(bad, ",")+`]}`)
	require.Equal(t, http.StatusForbidden, status, body)
	require.Equal(t, "EVENT_TYPE_NOT_PUBLISHABLE", errorCode(t, body))
	require.Contains(t, body, "events[3].type", "the refused items are named")
	require.Contains(t, body, "events[4].subject")
	require.Zero(t, eventCount(t, ts, owner.ID, "booking.created"), "nothing of a refused batch is recorded")
	require.Zero(t, eventCount(t, ts, owner.ID, "page.unpublished"))

	status, body = ts.do(t, http.MethodPost, "/api/admin/events/batch", owner.Key, `{"events":[]}`)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "EMPTY_BATCH", errorCode(t, body))
	many := make([]string, 101)
	for i := range many {
		many[i] = publishBody(fmt.Sprintf("m_%d", i), "")
	}
	status, body = ts.do(t, http.MethodPost, "/api/admin/events/batch", owner.Key, `{"events":[`+strings.Join(many, ",")+`]}`)
	require.Equal(t, http.StatusRequestEntityTooLarge, status, body)
	require.Equal(t, "BATCH_TOO_LARGE", errorCode(t, body))
	require.Zero(t, eventCount(t, ts, owner.ID, "booking.created"))

	status, body = ts.do(t, http.MethodPost, "/api/admin/events/batch", owner.Key, `{"events":[`+strings.Join(good, ",")+`]}`)
	require.Equal(t, http.StatusAccepted, status, body)
	var out struct {
		Data []publishOut `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	require.Len(t, out.Data, 3)
	for _, e := range out.Data {
		require.False(t, e.Duplicate)
		waitDelivery(t, ts, owner.Key, ep.ID, e.ID, "completed")
	}
	var seq []uuid.UUID
	rows, err := ts.App.Pool.Query(context.Background(), `SELECT id FROM events WHERE owner_id = $1 AND type IN ('booking.created', 'page.unpublished') ORDER BY seq`, owner.ID)
	require.NoError(t, err)
	for rows.Next() {
		var id uuid.UUID
		require.NoError(t, rows.Scan(&id))
		seq = append(seq, id)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []uuid.UUID{out.Data[0].ID, out.Data[1].ID, out.Data[2].ID}, seq, "recorded in input order")
}

// TestPublishedEventsReachOnlyThePublishersEndpoints: an event published by
// B reaches B's "*" endpoint and never A's, and the same idempotency key
// used by both owners names two different events.
func TestPublishedEventsReachOnlyThePublishersEndpoints(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	a, b := ts.newOwnerAccount(t), ts.newOwnerAccount(t)
	rcA, rcB := newReceiver(t, nil), newReceiver(t, nil)
	epA := createEndpoint(t, ts, a.Key, map[string]any{"url": rcA.URL, "event_types": []string{"*"}})
	epB := createEndpoint(t, ts, b.Key, map[string]any{"url": rcB.URL, "event_types": []string{"*"}})

	publish := func(key, bookingID string) publishOut {
		status, body := ts.do(t, http.MethodPost, "/api/admin/events", key, publishBody(bookingID, "shared-key"))
		require.Equal(t, http.StatusAccepted, status, body)
		var out publishOut
		require.NoError(t, json.Unmarshal([]byte(body), &out))
		return out
	}
	fromB := publish(b.Key, "b_of_B")
	fromA := publish(a.Key, "b_of_A")
	require.NotEqual(t, fromA.ID, fromB.ID, "idempotency keys are per owner")

	waitDelivery(t, ts, b.Key, epB.ID, fromB.ID, "completed")
	waitDelivery(t, ts, a.Key, epA.ID, fromA.ID, "completed")
	// Both events are fanned out (their fan-out jobs are done), so a
	// delivery of B's event to A's endpoint would exist by now.
	require.Eventually(t, func() bool {
		var pending int
		require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
			`SELECT count(*) FROM events WHERE id = ANY($1) AND fanned_out_at IS NULL`, []uuid.UUID{fromA.ID, fromB.ID}).Scan(&pending))
		return pending == 0
	}, 30*time.Second, 20*time.Millisecond)
	var unfinished int
	for _, j := range listJobs(t, ts, river.NewJobListParams().Kinds(delivery.KindDeliver, delivery.KindFanout)) {
		if j.State != rivertype.JobStateCompleted {
			unfinished++
		}
	}
	require.Zero(t, unfinished, "every fan-out and delivery finished")
	crossed := listJobs(t, ts, jobsOfKind(delivery.KindDeliver), func(r jobRef) bool {
		return r.EndpointID == epA.ID && r.EventID == fromB.ID || r.EndpointID == epB.ID && r.EventID == fromA.ID
	})
	require.Empty(t, crossed, "no delivery of one owner's published event to the other's endpoint")
	for rc, foreign := range map[*receiver]uuid.UUID{rcA: fromB.ID, rcB: fromA.ID} {
		for _, r := range rc.requests() {
			require.NotContains(t, string(r.Body), foreign.String())
		}
	}
}

// publishedByA publishes an event of A's under the idempotency key (once;
// later calls replay it) and returns its id.
func (fx *isolationFixture) publishedByA(t *testing.T, key string) string {
	t.Helper()
	status, body := fx.ts.do(t, http.MethodPost, "/api/admin/events", fx.A.Key, publishBody("b_of_A", key))
	require.Less(t, status, 300, body)
	var out publishOut
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	return out.ID.String()
}

// publishIsolationRows: publishing is not row-scoped (B records B's own
// events), but an idempotency key is the owner's: B using A's key gets a
// new event of B's, never A's.
func publishIsolationRows() map[string]isolationRow {
	return map[string]isolationRow{
		"POST /api/admin/events": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/events", Body: publishBody("b_of_A", "isolation"), Hidden: []string{fx.publishedByA(t, "isolation")}}
			},
			WantB: http.StatusAccepted, WantA: http.StatusOK,
		},
		"POST /api/admin/events/batch": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/events/batch", Body: `{"events":[` + publishBody("b_of_A", "isolation-batch") + `]}`,
					Hidden: []string{fx.publishedByA(t, "isolation-batch")}}
			},
			WantB: http.StatusAccepted, WantA: http.StatusOK,
		},
	}
}

// TestPublishThroughMCP: the MCP tool is the same op, refusals included.
func TestPublishThroughMCP(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	owner := ts.newOwnerAccount(t)
	cs := mcpSession(t, ts, owner.Key)
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	name := ""
	for _, tool := range tools.Tools {
		if tool.Name == "events.publish" || tool.Name == "events_publish" {
			name = tool.Name
			require.Contains(t, mustJSON(t, tool.InputSchema), "idempotency_key")
		}
	}
	require.NotEmpty(t, name, "no events.publish tool")
	out := callTool[publishOut](t, cs, name, map[string]any{"type": "gas.exhausted", "subject": "instance://gas",
		"data": map[string]any{"period": "2026-12"}, "idempotency_key": "mcp-1"})
	require.NotEqual(t, uuid.Nil, out.ID)
	again := callTool[publishOut](t, cs, name, map[string]any{"type": "gas.exhausted", "subject": "instance://gas",
		"data": map[string]any{"period": "2026-12"}, "idempotency_key": "mcp-1"})
	require.Equal(t, publishOut{ID: out.ID, Duplicate: true}, again)
	reused, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{"type": "gas.exhausted",
		"subject": "instance://gas", "data": map[string]any{"period": "2027-01"}, "idempotency_key": "mcp-1"}})
	require.NoError(t, err)
	require.True(t, reused.IsError)
	require.Contains(t, textOf(reused), "IDEMPOTENCY_KEY_REUSED")
	require.Contains(t, textOf(reused), out.ID.String())
	require.Equal(t, 1, eventCount(t, ts, owner.ID, "gas.exhausted"))

	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{
		"type": domain.EventIPBanAdded, "subject": "ip_ban/x", "data": map[string]any{}}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, textOf(res), "EVENT_TYPE_NOT_PUBLISHABLE")
	require.Zero(t, eventCount(t, ts, owner.ID, domain.EventIPBanAdded))
}
