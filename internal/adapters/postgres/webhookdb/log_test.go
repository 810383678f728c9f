package webhookdb_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// Retry now makes available a delivery an earlier version left in River's
// pending state, and refuses one already available, as send again does,
// leaving it as it was.
func TestRetryNowMakesAPendingDeliveryAvailable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	left, err := b.ins.Insert(ctx, riverjob.WebhookDeliverArgs{EndpointID: ep.ID, EventID: b.event(t, "code.issued")},
		&river.InsertOpts{Pending: true})
	require.NoError(t, err)
	queued, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: b.event(t, "code.issued")}}, delivery.Summary{})
	require.NoError(t, err)

	out, err := b.svc.RetryNow(ctx, b.owner, webhook.DeliveryIDInput{ID: ep.ID, JobID: left.Job.ID})
	require.NoError(t, err)
	require.Equal(t, webhook.RetryOutput{JobID: left.Job.ID, From: "pending", State: "available"}, out)
	require.Equal(t, rivertype.JobStateAvailable, b.job(t, left.Job.ID).State)

	available := webhook.DeliveryIDInput{ID: ep.ID, JobID: queued[0].JobID}
	before := b.job(t, queued[0].JobID)
	for name, retry := range map[string]func(context.Context, uuid.UUID, webhook.DeliveryIDInput) (webhook.RetryOutput, error){
		"retry now": b.svc.RetryNow, "send again": b.svc.SendAgain,
	} {
		_, err = retry(ctx, b.owner, available)
		var de *domain.Error
		require.ErrorAs(t, err, &de, name)
		require.Equal(t, webhook.CodeWrongState, de.Code, name)
	}
	after := b.job(t, queued[0].JobID)
	require.Equal(t, rivertype.JobStateAvailable, after.State)
	require.Equal(t, before.ScheduledAt, after.ScheduledAt, "a refused retry changes nothing")
}

// River makes a retry or a snooze due within its scheduler's interval
// available ahead of its time, its scheduled_at still ahead. Such a
// delivery still waits for that time: retry now takes it, as scheduled,
// and runs it at once.
func TestRetryNowTakesADeliveryRiverMadeAvailableAheadOfItsTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	snooze := rivertest.NewWorker(t, riverpgxv5.New(b.pool), &river.Config{},
		river.WorkFunc(func(context.Context, *river.Job[riverjob.WebhookDeliverArgs]) error {
			return river.JobSnooze(4 * time.Second)
		}))
	tx, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	res, err := snooze.Work(ctx, t, tx, riverjob.WebhookDeliverArgs{EndpointID: ep.ID, EventID: b.event(t, "code.issued")}, nil)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	job := res.Job
	require.Equal(t, rivertype.JobStateAvailable, job.State)
	require.True(t, job.ScheduledAt.After(time.Now()), "available ahead of its time")
	in := webhook.DeliveryIDInput{ID: ep.ID, JobID: job.ID}
	det, err := b.svc.Delivery(ctx, b.owner, in)
	require.NoError(t, err)
	require.Equal(t, "scheduled", det.State, "the log shows it waiting for its time")
	require.Equal(t, webhook.StatusWaiting, det.Status)
	require.Equal(t, "schedule", det.WaitingFor)
	page, err := b.svc.Deliveries(ctx, b.owner, webhook.DeliveriesInput{ID: ep.ID, State: webhook.StatusWaiting})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)

	out, err := b.svc.RetryNow(ctx, b.owner, in)
	require.NoError(t, err)
	require.Equal(t, webhook.RetryOutput{JobID: job.ID, From: "scheduled", State: "available"}, out)
	var due bool
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT scheduled_at <= now() FROM river_job WHERE id = $1`, job.ID).Scan(&due))
	require.True(t, due, "it runs at once")
	_, err = b.svc.SendAgain(ctx, b.owner, in)
	require.Error(t, err, "not finished: send again refuses it")
}

// Recover queues the range's events the endpoint has no delivery of,
// available at once on the endpoint's lane (the one its fan-outs use),
// and a second recover of the range queues nothing.
func TestRecoverQueuesTheRangeAvailableOnTheEndpointsLaneOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, l := range []string{"webhooks_a1", "webhooks_a2", "webhooks_a3", "webhooks_a4", "webhooks_a5", "webhooks_a6", "webhooks_a7", "webhooks_a8"} {
		b.lane(t, l, time.Hour)
	}
	since := time.Now().Add(-time.Second)
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["code.issued"]}`)
	delivered := b.event(t, "code.issued")
	res, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: delivered}}, delivery.Summary{})
	require.NoError(t, err)
	require.False(t, res[0].Duplicate)
	lane := b.job(t, res[0].JobID).Queue
	require.NotEqual(t, riverjob.QueueWebhooks, lane, "the fan-out put the delivery on a lane")
	b.event(t, "code.issued")
	b.event(t, "code.issued")
	b.event(t, "code.revoked") // not subscribed
	other := b.newOwner(t)
	_, err = b.pool.Exec(ctx, `INSERT INTO events (owner_id, type, subject) VALUES ($1, 'code.issued', 'code:x')`, other)
	require.NoError(t, err)

	in := webhook.RecoverInput{ID: ep.ID, Since: since.UTC().Format(time.RFC3339Nano)}
	out, err := b.svc.Recover(ctx, b.owner, in)
	require.NoError(t, err)
	require.Equal(t, webhook.RecoverOutput{Events: 3, Queued: 2, Existing: 1, Skipped: []webhook.SkippedEvent{}}, out)
	recovered := 0
	for _, j := range b.deliveryJobs(t, nil) {
		if j.ID == res[0].JobID {
			continue
		}
		require.Equal(t, ep.ID, deliveryArgs(t, j).EndpointID)
		require.Equal(t, rivertype.JobStateAvailable, j.State, "a recovered delivery runs at once")
		require.Equal(t, lane, j.Queue, "a recovered delivery goes on the endpoint's lane")
		recovered++
	}
	require.Equal(t, 2, recovered)

	out, err = b.svc.Recover(ctx, b.owner, in)
	require.NoError(t, err)
	require.Equal(t, webhook.RecoverOutput{Events: 3, Queued: 0, Existing: 3, Skipped: []webhook.SkippedEvent{}}, out, "a second recover queues nothing")
}

func TestStatusFilterMatchesStatusOf(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	cases := []struct {
		set    string
		status string
	}{
		{`state = 'completed', finalized_at = now()`, webhook.StatusDelivered},
		{`state = 'running', attempted_at = now(), attempt = 1`, webhook.StatusSending},
		{`state = 'available'`, webhook.StatusWaiting},
		{`state = 'scheduled', scheduled_at = now() + interval '5 minutes'`, webhook.StatusWaiting},
		{`state = 'scheduled', scheduled_at = now() + interval '5 minutes', attempt = 1, errors = ARRAY['{"error":"HTTP 500","attempt":1}'::jsonb]`, webhook.StatusRetrying},
		{`state = 'retryable', attempt = 1, errors = ARRAY['{"error":"HTTP 500","attempt":1}'::jsonb]`, webhook.StatusRetrying},
		{`state = 'discarded', finalized_at = now(), errors = ARRAY['{"error":"HTTP 500","attempt":1}'::jsonb]`, webhook.StatusFailed},
		{`state = 'cancelled', finalized_at = now()`, webhook.StatusCancelled},
	}
	want := map[string]map[int64]bool{}
	for _, c := range cases {
		res, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: b.event(t, "code.issued")}}, delivery.Summary{})
		require.NoError(t, err)
		_, err = b.pool.Exec(ctx, `UPDATE river_job SET `+c.set+` WHERE id = $1`, res[0].JobID)
		require.NoError(t, err)
		if want[c.status] == nil {
			want[c.status] = map[int64]bool{}
		}
		want[c.status][res[0].JobID] = true
	}
	for _, status := range webhook.DeliveryStatuses {
		page, err := b.svc.Deliveries(ctx, b.owner, webhook.DeliveriesInput{ID: ep.ID, State: status})
		require.NoError(t, err)
		got := map[int64]bool{}
		for _, d := range page.Data {
			got[d.JobID] = true
			require.Equal(t, status, d.Status, "the row's status is the filter's")
		}
		require.Equal(t, want[status], got, status)
	}
}
