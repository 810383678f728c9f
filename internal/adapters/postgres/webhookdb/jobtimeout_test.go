package webhookdb_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery/deliverytest"
)

// The job timeout ends a delivery run that nothing else ends: a POST that
// ignores its own deadline (a stuck exchange) is cut at JobTimeout by
// River's context, the job waits for its retry, and the endpoint's lease is free for its next delivery at once.
// With the worker's Timeout removed (River's client default of a minute)
// or raised, the run outlives the bound below and the test fails.
func TestTheJobTimeoutEndsAStuckDelivery(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	var stuck atomic.Bool
	stuck.Store(true)
	d := delivery.NewDeliverer(delivery.DeliverDeps{
		Store: b.store,
		Poster: &deliverytest.Poster{PostFunc: func(ctx context.Context, _ delivery.PostRequest) (delivery.PostResponse, error) {
			if stuck.Load() {
				// req.Timeout is ignored on purpose: only the run's
				// context ends this exchange.
				<-ctx.Done()
				return delivery.PostResponse{}, ctx.Err()
			}
			return delivery.PostResponse{StatusCode: 200}, nil
		}},
		Unseal: unseal,
	})
	worker := rivertest.NewWorker(t, riverpgxv5.New(b.pool), &river.Config{}, &riverjob.WebhookDeliverWorker{Deliverer: d})
	tx, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { require.NoError(t, tx.Rollback(ctx)) }()

	type result struct {
		res *rivertest.WorkResult
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		res, err := worker.Work(ctx, t, tx, riverjob.WebhookDeliverArgs{EndpointID: ep.ID, EventID: b.event(t, "code.issued")}, nil)
		done <- result{res, err}
	}()
	var got result
	select {
	case got = <-done:
	case <-time.After(delivery.JobTimeout + 5*time.Second):
		t.Fatalf("the stuck run outlived the job timeout (%s) by 5 s", delivery.JobTimeout)
	}
	took := time.Since(start)
	require.GreaterOrEqual(t, took, delivery.JobTimeout, "nothing but the job timeout ends this run")
	require.ErrorIs(t, got.err, context.DeadlineExceeded)
	require.Equal(t, river.EventKindJobFailed, got.res.EventKind)
	require.Equal(t, rivertype.JobStateRetryable, got.res.Job.State, "the delivery waits for its retry")

	require.ErrorContains(t, got.err, "delivery interrupted")
	// The cut is the run's, not the receiver's: River records the error,
	// the delivery log no attempt, and the endpoint is not failing.
	var attempts int
	var failing bool
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE job_id = $1`, got.res.Job.ID).Scan(&attempts))
	require.Zero(t, attempts)
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT failing_since IS NOT NULL FROM webhook_endpoints WHERE id = $1`, ep.ID).Scan(&failing))
	require.False(t, failing)

	// The lease went back with the run: the endpoint's next delivery posts
	// now, not after the lease's TTL.
	stuck.Store(false)
	next, err := worker.Work(ctx, t, tx, riverjob.WebhookDeliverArgs{EndpointID: ep.ID, EventID: b.event(t, "code.issued")}, nil)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateCompleted, next.Job.State)
}
