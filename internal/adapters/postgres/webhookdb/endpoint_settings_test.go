package webhookdb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/postgres/webhookdb"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

func TestSettingsAreStoredAndReadBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"],"timeout_seconds":4,"max_attempts":7,"max_in_flight":2}`)
	d := b.endpoint(t, `{"url":"https://d.example/h","event_types":["*"]}`)
	got, err := b.svc.Get(ctx, b.owner, a.ID)
	require.NoError(t, err)
	require.Equal(t, 4, got.TimeoutSeconds)
	require.Equal(t, 7, got.MaxAttempts)
	got, err = b.svc.Get(ctx, b.owner, d.ID)
	require.NoError(t, err)
	require.Equal(t, webhook.MaxTimeoutSeconds, got.TimeoutSeconds)
	require.Equal(t, webhook.MaxAttemptsCap, got.MaxAttempts)

	in := webhook.UpdateInput{ID: a.ID, TimeoutSeconds: ptr(1), MaxAttempts: ptr(18)}
	_, err = b.svc.Update(ctx, b.owner, in)
	require.NoError(t, err)
	var timeout, attempts int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT timeout_seconds, max_attempts FROM webhook_endpoints WHERE id = $1`, a.ID).
		Scan(&timeout, &attempts))
	require.Equal(t, []int{1, 18}, []int{timeout, attempts})

	// The table refuses what the domain refuses.
	_, err = b.pool.Exec(ctx, `UPDATE webhook_endpoints SET timeout_seconds = 11 WHERE id = $1`, a.ID)
	require.Error(t, err)
	_, err = b.pool.Exec(ctx, `UPDATE webhook_endpoints SET max_attempts = 0 WHERE id = $1`, a.ID)
	require.Error(t, err)
}

func ptr[T any](v T) *T { return &v }

func TestSoftDeleteKeepsTheLogAndStopsTheFanout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	keep := b.endpoint(t, `{"url":"https://k.example/h","event_types":["*"]}`)
	ev := b.event(t, "code.issued")
	_, err := b.pool.Exec(ctx, `INSERT INTO webhook_attempts (job_id, endpoint_id, event_id, attempt, outcome, status_code, attempted_at)
VALUES (1, $1, $2, 1, 'completed', 204, now())`, a.ID, ev)
	require.NoError(t, err)

	require.NoError(t, b.svc.Delete(ctx, b.owner, a.ID))
	require.ErrorIs(t, b.svc.Delete(ctx, b.owner, a.ID), domain.ErrNotFound, "deleted twice")
	v, err := b.svc.Get(ctx, b.owner, a.ID)
	require.NoError(t, err)
	require.Equal(t, webhook.StateDeleted, v.State)
	require.NotNil(t, v.DeletedAt)

	eps, err := b.store.Endpoints(ctx, b.owner)
	require.NoError(t, err)
	require.Len(t, eps, 1, "the fan-out does not pick a deleted endpoint")
	require.Equal(t, keep.ID, eps[0].ID)
	_, err = b.pool.Exec(ctx, `UPDATE webhook_endpoints SET enabled = true WHERE id = $1`, a.ID)
	require.Error(t, err, "a deleted endpoint cannot be enabled again, even by hand")

	var attempts int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1`, a.ID).Scan(&attempts))
	require.Equal(t, 1, attempts, "the delivery history stays")

	n, err := webhookdb.PurgeDeletedEndpoints(ctx, b.pool, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.Zero(t, n, "deleted less than the retention ago: kept")
	n, err = webhookdb.PurgeDeletedEndpoints(ctx, b.pool, time.Now().Add(time.Hour))
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1`, a.ID).Scan(&attempts))
	require.Zero(t, attempts, "past the retention the history goes with the endpoint")
	_, err = b.svc.Get(ctx, b.owner, a.ID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	_, err = b.svc.Get(ctx, b.owner, keep.ID)
	require.NoError(t, err, "only deleted endpoints are purged")
}

func TestListFiltersSortsAndReadsHealthFromTheAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.svc = webhook.NewService(webhook.Deps{
		UnitOfWork: webhookdb.NewUnitOfWork(b.pool, nil, b.ins),
		Seal:       func(p, ad []byte) ([]byte, error) { return append(append([]byte{}, ad...), p...), nil },
		Health:     webhookdb.NewHealthReader(b.pool),
	})
	ctx := context.Background()
	c := b.endpoint(t, `{"url":"https://c.example/under_score","event_types":["booking.*"]}`)
	a := b.endpoint(t, `{"url":"https://A.example/hook","event_types":["webhook.test"]}`)
	f := b.endpoint(t, `{"url":"https://b.example/HOOK","event_types":["*"]}`)
	g := b.endpoint(t, `{"url":"https://g.example/hook","event_types":["booking.*"]}`)
	_, err := b.pool.Exec(ctx, `UPDATE webhook_endpoints SET failing_since = now() WHERE id = $1`, f.ID)
	require.NoError(t, err)
	_, err = b.svc.Update(ctx, b.owner, webhook.UpdateInput{ID: c.ID, Enabled: ptr(false)})
	require.NoError(t, err)
	require.NoError(t, b.svc.Delete(ctx, b.owner, g.ID))
	other := b.newOwner(t)
	_, err = b.svc.Create(ctx, other, webhook.CreateInput{URL: "https://a.example/hook", EventTypes: []string{"*"}})
	require.NoError(t, err)

	ev := b.event(t, "code.issued")
	now := time.Now()
	for i, row := range []struct {
		outcome string
		at      time.Time
	}{
		{"completed", now.Add(-48 * time.Hour)},
		{"retryable", now.Add(-time.Hour)},
		{"completed", now.Add(-30 * time.Minute)},
		{"snoozed", now.Add(-20 * time.Minute)},
		{"completed", now.Add(-10 * time.Minute)},
		{"discarded", now.Add(-5 * time.Minute)},
	} {
		var reason *string
		if row.outcome == "discarded" {
			reason = ptr(`dial tcp: lookup hooks.no-such-name.test: no such host`)
		}
		_, err := b.pool.Exec(ctx, `INSERT INTO webhook_attempts (job_id, endpoint_id, event_id, attempt, outcome, attempted_at, status_code, error)
VALUES ($1, $2, $3, 1, $4, $5, 503, $6)`, i+1, a.ID, ev, row.outcome, row.at, reason)
		require.NoError(t, err)
	}

	list := func(in webhook.ListInput) ([]uuid.UUID, []webhook.View) {
		t.Helper()
		p, err := b.svc.List(ctx, b.owner, in)
		require.NoError(t, err)
		var ids []uuid.UUID
		for _, v := range p.Data {
			ids = append(ids, v.ID)
		}
		return ids, p.Data
	}
	ids, views := list(webhook.ListInput{Sort: "created"})
	require.Equal(t, []uuid.UUID{c.ID, a.ID, f.ID}, ids, "oldest first, deleted left out, other owner's not seen")
	h := views[1].Health
	require.NotNil(t, h)
	require.Equal(t, 4, h.Attempts24h, "the day's attempts, the wait not counted")
	require.Equal(t, 2, h.Succeeded24h)
	require.InDelta(t, 0.5, *h.SuccessRate24h, 1e-9)
	require.WithinDuration(t, now.Add(-10*time.Minute), *h.LastSuccessAt, time.Second)
	require.WithinDuration(t, now.Add(-5*time.Minute), *h.LastFailureAt, time.Second)
	require.NotNil(t, h.LastFailure)
	require.Contains(t, *h.LastFailure, "no such host", "the endpoint says why its latest attempt failed")
	require.Nil(t, views[0].Health.SuccessRate24h)
	require.Nil(t, views[0].Health.LastSuccessAt)

	cases := []struct {
		in   webhook.ListInput
		want []uuid.UUID
	}{
		{webhook.ListInput{}, []uuid.UUID{f.ID, a.ID, c.ID}},
		{webhook.ListInput{Sort: "-created"}, []uuid.UUID{f.ID, a.ID, c.ID}},
		{webhook.ListInput{Sort: "url"}, []uuid.UUID{a.ID, f.ID, c.ID}},
		{webhook.ListInput{Sort: "-url"}, []uuid.UUID{c.ID, f.ID, a.ID}},
		{webhook.ListInput{State: webhook.StateEnabled}, []uuid.UUID{a.ID}},
		{webhook.ListInput{State: webhook.StateFailing}, []uuid.UUID{f.ID}},
		{webhook.ListInput{State: webhook.StateDisabled}, []uuid.UUID{c.ID}},
		{webhook.ListInput{State: webhook.StateDeleted}, []uuid.UUID{g.ID}},
		{webhook.ListInput{EventType: "booking.created"}, []uuid.UUID{f.ID, c.ID}},
		{webhook.ListInput{EventType: "webhook.test"}, []uuid.UUID{f.ID, a.ID}},
		{webhook.ListInput{URL: "hook"}, []uuid.UUID{f.ID, a.ID}},
		{webhook.ListInput{URL: "_"}, []uuid.UUID{c.ID}},
		{webhook.ListInput{URL: "%"}, nil},
		{webhook.ListInput{URL: "hook", Sort: "-url", State: webhook.StateFailing}, []uuid.UUID{f.ID}},
	}
	for _, tc := range cases {
		ids, _ := list(tc.in)
		require.Equal(t, tc.want, ids, "%+v", tc.in)
	}
	// Paging by URL, both directions.
	for _, sort := range []string{"url", "-url"} {
		var got []uuid.UUID
		cursor := ""
		for range 5 {
			p, err := b.svc.List(ctx, b.owner, webhook.ListInput{Sort: sort, PageInput: op.PageInput{Limit: 1, Cursor: cursor}})
			require.NoError(t, err)
			for _, v := range p.Data {
				got = append(got, v.ID)
			}
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		want, _ := list(webhook.ListInput{Sort: sort})
		require.Equal(t, want, got, sort)
	}
}

func TestStateCollectorCountsEndpointsAndDeliveries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	f := b.endpoint(t, `{"url":"https://f.example/h","event_types":["*"]}`)
	d := b.endpoint(t, `{"url":"https://d.example/h","event_types":["*"],"enabled":false}`)
	g := b.endpoint(t, `{"url":"https://g.example/h","event_types":["*"]}`)
	_, err := b.pool.Exec(ctx, `UPDATE webhook_endpoints SET failing_since = now() WHERE id = $1`, f.ID)
	require.NoError(t, err)
	require.NoError(t, b.svc.Delete(ctx, b.owner, g.ID))
	_ = d
	for range 2 {
		_, err := b.svc.SendTest(ctx, b.owner, f.ID)
		require.NoError(t, err)
	}
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(webhookdb.NewStateCollector(b.pool, zap.NewNop())))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := strings.TrimPrefix(mf.GetName(), "standmeet_webhook_")
			if len(m.GetLabel()) > 0 {
				key += "/" + m.GetLabel()[0].GetValue()
			}
			got[key] = m.GetGauge().GetValue()
		}
	}
	require.Equal(t, map[string]float64{
		"state_up":            1,
		"endpoints/failing":   1,
		"endpoints/disabled":  1,
		"deliveries/waiting":  2,
		"deliveries/running":  0,
		"deliveries/retrying": 0,
		"deliveries/failed":   0,
	}, got)
}

func TestEventDeliveriesListTheEventsJobsWithTheirEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	sent, err := b.svc.SendTest(ctx, b.owner, a.ID)
	require.NoError(t, err)

	out, err := b.svc.EventDeliveries(ctx, b.owner, sent.EventID)
	require.NoError(t, err)
	require.Len(t, out.Data, 1)
	d := out.Data[0]
	require.Equal(t, sent.JobID, d.JobID)
	require.Equal(t, a.ID, d.EndpointID)
	require.Equal(t, "https://a.example/h", d.EndpointURL)
	require.Equal(t, webhook.StateEnabled, d.EndpointState)
	require.Equal(t, "webhook.test", d.EventType)
	require.Equal(t, webhook.TaskURL(sent.JobID), d.TaskURL)

	other := b.newOwner(t)
	_, err = b.svc.EventDeliveries(ctx, other, sent.EventID)
	require.ErrorIs(t, err, domain.ErrNotFound, "another owner's event is not found")
	_, err = b.svc.EventDeliveries(ctx, b.owner, uuid.New())
	require.ErrorIs(t, err, domain.ErrNotFound)

	require.NoError(t, b.svc.Delete(ctx, b.owner, a.ID))
	out, err = b.svc.EventDeliveries(ctx, b.owner, sent.EventID)
	require.NoError(t, err)
	require.Len(t, out.Data, 1, "a deleted endpoint's deliveries stay listed")
	require.Equal(t, webhook.StateDeleted, out.Data[0].EndpointState)

	ev := b.event(t, "code.issued")
	out, err = b.svc.EventDeliveries(ctx, b.owner, ev)
	require.NoError(t, err)
	require.NotNil(t, out.Data)
	require.Empty(t, out.Data, "an event without deliveries lists none")
}
