package main

// The owner-isolation rows of every /api/admin/webhooks route (the table is
// TestOwnerIsolationOnEveryAdminRoute's, in e2e_owner_test.go).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// endpointOfA creates a webhook endpoint of A's. Its URL is a loopback
// discard port the egress policy refuses at dial time, and it subscribes to
// no type the fixtures record, so nothing is ever sent.
func (fx *isolationFixture) endpointOfA(t *testing.T) string {
	t.Helper()
	return fx.createAsA(t, "/api/admin/webhooks", `{"url":"http://127.0.0.1:9/isolation","event_types":["code.*"],"description":"a-endpoint"}`)
}

// endpointStateOfA reads A's endpoint as A sees it (secrets excluded, so
// compare updated_at to tell a write).
func (fx *isolationFixture) endpointStateOfA(t *testing.T, id string) map[string]any {
	t.Helper()
	status, body := fx.ts.do(t, http.MethodGet, "/api/admin/webhooks/"+id, fx.A.Key, "")
	require.Equal(t, http.StatusOK, status, body)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m))
	return m
}

// endpointIDOf returns the endpoint id in a /api/admin/webhooks/{id}… path.
func endpointIDOf(path string) string {
	return strings.Split(strings.TrimPrefix(path, "/api/admin/webhooks/"), "/")[0]
}

// unchangedForA requires that B's request left A's endpoint as it was.
func unchangedForA(t *testing.T, fx *isolationFixture, target isolationTarget) {
	t.Helper()
	now := fx.endpointStateOfA(t, endpointIDOf(target.Path))
	require.Equal(t, "a-endpoint", now["description"])
	require.Equal(t, true, now["enabled"])
	require.Nil(t, now["filter"])
}

// signedFilteredEndpointOfA creates an ed25519 endpoint of A's with a
// payload filter and returns its id and public key.
func (fx *isolationFixture) signedFilteredEndpointOfA(t *testing.T) (id, publicKey string) {
	t.Helper()
	status, body := fx.ts.do(t, http.MethodPost, "/api/admin/webhooks", fx.A.Key, `{"url":"http://127.0.0.1:9/isolation",`+
		`"event_types":["code.*"],"description":"a-endpoint","signing":"ed25519","filter":{"subject":"a-filter-value"}}`)
	require.Equal(t, http.StatusCreated, status, body)
	var out struct {
		ID        string `json:"id"`
		PublicKey string `json:"public_key"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	require.NotEmpty(t, out.PublicKey, body)
	return out.ID, out.PublicKey
}

// webhooksIsolationRows covers the outbound webhook endpoints
// (internal/owner/webhook): B gets 404 on every route naming A's endpoint,
// and A's endpoint is left as it was.
func webhooksIsolationRows() map[string]isolationRow {
	endpointPath := func(suffix string) func(*testing.T, *isolationFixture) isolationTarget {
		return func(t *testing.T, fx *isolationFixture) isolationTarget {
			return isolationTarget{Path: "/api/admin/webhooks/" + fx.endpointOfA(t) + suffix}
		}
	}
	return map[string]isolationRow{
		"GET /api/admin/webhooks": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/webhooks", Hidden: []string{fx.endpointOfA(t), "a-endpoint"}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
			// No filter or order shows B one of A's endpoints, deleted
			// ones included.
			After: func(t *testing.T, fx *isolationFixture, target isolationTarget) {
				deleted := fx.endpointOfA(t)
				status, body := fx.ts.do(t, http.MethodDelete, "/api/admin/webhooks/"+deleted, fx.A.Key, "")
				require.Equal(t, http.StatusNoContent, status, body)
				for _, q := range []string{"state=enabled", "state=failing", "state=disabled", "state=deleted",
					"event_type=code.issued", "url=isolation", "sort=url", "sort=-created"} {
					status, body := fx.ts.do(t, http.MethodGet, "/api/admin/webhooks?"+q, fx.B.Key, "")
					require.Equal(t, http.StatusOK, status, body)
					for _, h := range append(target.Hidden, deleted) {
						require.NotContains(t, body, h, "owner B sees A's endpoint with %s", q)
					}
				}
			},
		},
		"POST /api/admin/webhooks": {
			// Not row-scoped: the endpoint is B's own.
			Target: func(*testing.T, *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/webhooks", Body: `{"url":"http://127.0.0.1:9/b","event_types":["code.*"]}`}
			},
			WantB: http.StatusCreated,
			After: createdForB("webhook_endpoints", "url", "http://127.0.0.1:9/b", 1),
		},
		"GET /api/admin/webhooks/event-types": {
			Target: func(*testing.T, *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/webhooks/event-types"}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"GET /api/admin/webhooks/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, public := fx.signedFilteredEndpointOfA(t)
				return isolationTarget{Path: "/api/admin/webhooks/" + id, Hidden: []string{id, "a-endpoint", public, "a-filter-value"}}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"PATCH /api/admin/webhooks/:id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/webhooks/" + fx.endpointOfA(t),
					Body: `{"description":"changed","enabled":false,"filter":{"type":"code.issued"}}`}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK, After: unchangedForA,
		},
		"DELETE /api/admin/webhooks/:id": {
			Target: endpointPath(""), WantB: http.StatusNotFound, WantA: http.StatusNoContent, After: unchangedForA,
		},
		"POST /api/admin/webhooks/:id/rotate-secret": {
			Target: endpointPath("/rotate-secret"), WantB: http.StatusNotFound, WantA: http.StatusOK,
			After: func(t *testing.T, fx *isolationFixture, target isolationTarget) {
				var rotated bool
				require.NoError(t, fx.ts.App.Pool.QueryRow(t.Context(),
					`SELECT prev_secret_enc IS NOT NULL FROM webhook_endpoints WHERE id = $1`, endpointIDOf(target.Path)).Scan(&rotated))
				require.False(t, rotated, "B rotated A's secret")
			},
		},
		"POST /api/admin/webhooks/:id/test": {
			Target: endpointPath("/test"), WantB: http.StatusNotFound, WantA: http.StatusAccepted,
			After: func(t *testing.T, fx *isolationFixture, target isolationTarget) {
				require.Zero(t, fx.deliveriesTo(t, endpointIDOf(target.Path)), "B queued a test delivery to A's endpoint")
			},
		},
		"GET /api/admin/webhooks/:id/deliveries": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				// A delivery of A's, to look for in B's answer.
				id, event := fx.testEventOfA(t)
				return isolationTarget{Path: "/api/admin/webhooks/" + id + "/deliveries", Hidden: []string{event}}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"POST /api/admin/webhooks/:id/redeliver": {
			Target: endpointPath("/redeliver"), WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"GET /api/admin/webhooks/:id/deliveries/:job_id": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, job, event := fx.deliveryOfA(t)
				return isolationTarget{Path: "/api/admin/webhooks/" + id + "/deliveries/" + job, Hidden: []string{event, "/isolation"}}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"POST /api/admin/webhooks/:id/deliveries/:job_id/retry": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, job, _ := fx.deliveryOfA(t)
				return isolationTarget{Path: "/api/admin/webhooks/" + id + "/deliveries/" + job + "/retry"}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK, After: unchangedJobForA,
		},
		"POST /api/admin/webhooks/:id/deliveries/:job_id/resend": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, job, _ := fx.deliveryOfA(t)
				return isolationTarget{Path: "/api/admin/webhooks/" + id + "/deliveries/" + job + "/resend"}
			},
			// A's delivery waits for its retry: A's own resend is refused
			// as the wrong state.
			WantB: http.StatusNotFound, WantA: http.StatusConflict, After: unchangedJobForA,
		},
		"POST /api/admin/webhooks/:id/recover": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/webhooks/" + fx.endpointOfA(t) + "/recover", Body: `{"since":"2000-01-01T00:00:00Z"}`}
			},
			WantB: http.StatusNotFound, WantA: http.StatusAccepted,
			After: func(t *testing.T, fx *isolationFixture, target isolationTarget) {
				unchangedForA(t, fx, target)
				require.Zero(t, fx.deliveriesTo(t, endpointIDOf(target.Path)), "B queued a recovered delivery to A's endpoint")
			},
		},
		"GET /api/admin/events/:id/deliveries": {
			// A's test event and its delivery to A's endpoint: B must not
			// learn the endpoint or its URL.
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id, event := fx.testEventOfA(t)
				return isolationTarget{Path: "/api/admin/events/" + event + "/deliveries", Hidden: []string{id, "/isolation"}}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
		"GET /api/admin/events/outcomes": {
			// A's test event has a delivery to A's endpoint: B asking for
			// its outcome learns of none.
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				_, event := fx.testEventOfA(t)
				return isolationTarget{Path: "/api/admin/events/outcomes?ids=" + event, Hidden: []string{`"deliveries":1`}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"GET /api/admin/events/:id/fanout": {
			// An event of A's that A's endpoint does not subscribe to: its
			// summary names the endpoint, which B must not learn.
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id := fx.endpointOfA(t)
				ev := recordEvent(t, fx.ts, fx.A.ID, "api_key.issued", "", map[string]any{})
				waitFanout(t, fx.ts, fx.A.Key, ev)
				return isolationTarget{Path: "/api/admin/events/" + ev.String() + "/fanout", Hidden: []string{id, "/isolation"}}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
	}
}

// jobSnapshots holds, by job id, the River row of a delivery of A's as
// deliveryOfA left it.
var jobSnapshots sync.Map

// jobSnapshot reads what a retry or resend would change on a job.
func jobSnapshot(t *testing.T, fx *isolationFixture, job string) string {
	t.Helper()
	id, err := strconv.ParseInt(job, 10, 64)
	require.NoError(t, err)
	row, err := fx.ts.App.Worker.JobGet(t.Context(), id)
	require.NoError(t, err)
	state := string(row.State)
	// River's scheduler makes a retry due within its interval available
	// ahead of its time: the same wait, not a move.
	if row.State == rivertype.JobStateRetryable || row.State == rivertype.JobStateScheduled ||
		(row.State == rivertype.JobStateAvailable && row.ScheduledAt.After(time.Now())) {
		state = "waiting for its time"
	}
	return fmt.Sprintf("%s %d %s", state, row.Attempt, row.ScheduledAt.UTC().Format(time.RFC3339Nano))
}

// deliveryOfA sends a test to a new endpoint of A's and waits until its
// first attempt has failed (the loopback discard port refuses the
// connection: the delivery waits for its retry, 5 s on), returning the endpoint id, the job id
// and the event id.
func (fx *isolationFixture) deliveryOfA(t *testing.T) (id, job, event string) {
	t.Helper()
	id = fx.endpointOfA(t)
	status, body := fx.ts.do(t, http.MethodPost, "/api/admin/webhooks/"+id+"/test", fx.A.Key, "")
	require.Equal(t, http.StatusAccepted, status, body)
	var out struct {
		EventID string `json:"event_id"`
		JobID   int64  `json:"job_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	job = strconv.FormatInt(out.JobID, 10)
	require.Eventually(t, func() bool {
		row, err := fx.ts.App.Worker.JobGet(t.Context(), out.JobID)
		require.NoError(t, err)
		// Retryable after a refused attempt: a delivery that waited for the
		// endpoint's lease (another of A's events to the same endpoint) is
		// scheduled for a moment, then attempted.
		return row.State == rivertype.JobStateRetryable && row.Attempt >= 1
	}, 30*time.Second, 20*time.Millisecond, "A's test delivery never failed its first attempt")
	jobSnapshots.Store(job, jobSnapshot(t, fx, job))
	return id, job, out.EventID
}

// unchangedJobForA requires that B's request left A's endpoint and its
// delivery job as they were.
func unchangedJobForA(t *testing.T, fx *isolationFixture, target isolationTarget) {
	t.Helper()
	unchangedForA(t, fx, target)
	parts := strings.Split(target.Path, "/")
	job := parts[len(parts)-2]
	before, ok := jobSnapshots.Load(job)
	require.True(t, ok)
	require.Equal(t, before, jobSnapshot(t, fx, job), "B moved A's delivery")
}

// testEventOfA sends a test event to a new endpoint of A's and returns the
// endpoint's and the event's ids.
func (fx *isolationFixture) testEventOfA(t *testing.T) (endpoint, event string) {
	t.Helper()
	endpoint = fx.endpointOfA(t)
	status, body := fx.ts.do(t, http.MethodPost, "/api/admin/webhooks/"+endpoint+"/test", fx.A.Key, "")
	require.Equal(t, http.StatusAccepted, status, body)
	var out struct {
		EventID string `json:"event_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	return endpoint, out.EventID
}

// deliveriesTo counts the delivery jobs queued to an endpoint.
func (fx *isolationFixture) deliveriesTo(t *testing.T, endpointID string) int {
	t.Helper()
	return len(listJobs(t, fx.ts, jobsOfKind(delivery.KindDeliver), forEndpoint(uuid.MustParse(endpointID))))
}
