package webhookdb_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery/deliverytest"
)

// A delivery whose run recorded a success but whose process died before
// River completed it (River records that attempt as an error, as its
// rescuer does) is not posted again by the next run, which completes it.
// A delivery sent again by its owner, and one retried after a failure,
// are posted.
func TestARunAfterARecordedSuccessCompletesWithoutPosting(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	var posts, status atomic.Int32
	status.Store(200)
	d := delivery.NewDeliverer(delivery.DeliverDeps{
		Store: b.store,
		Poster: &deliverytest.Poster{PostFunc: func(context.Context, delivery.PostRequest) (delivery.PostResponse, error) {
			posts.Add(1)
			return delivery.PostResponse{StatusCode: int(status.Load())}, nil
		}},
		Unseal: unseal,
	})
	deliver := &riverjob.WebhookDeliverWorker{Deliverer: d}
	// The first run of each job finishes, then its process "dies": River
	// records an error for the attempt, whatever the run recorded.
	worker := rivertest.NewWorker(t, riverpgxv5.New(b.pool), &river.Config{},
		river.WorkFunc(func(ctx context.Context, job *river.Job[riverjob.WebhookDeliverArgs]) error {
			err := deliver.Work(ctx, job)
			if job.Attempt == 1 {
				return errors.Join(err, errors.New("the process died after the run finished"))
			}
			return err
		}))
	tx, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { require.NoError(t, tx.Rollback(ctx)) }()
	attempts := func(jobID int64) (n int) {
		t.Helper()
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE job_id = $1`, jobID).Scan(&n))
		return n
	}

	first, err := worker.Work(ctx, t, tx, riverjob.WebhookDeliverArgs{EndpointID: ep.ID, EventID: b.event(t, "code.issued")}, nil)
	require.ErrorContains(t, err, "died")
	require.Equal(t, river.EventKindJobFailed, first.EventKind, "River records the attempt as an error")
	require.EqualValues(t, 1, posts.Load())
	again, err := worker.WorkJob(ctx, t, tx, first.Job)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateCompleted, again.Job.State)
	require.Equal(t, 2, again.Job.Attempt)
	require.EqualValues(t, 1, posts.Load(), "the receiver has it: not posted again")
	require.Equal(t, 1, attempts(first.Job.ID), "the recorded attempt stands alone")

	// The owner sends the completed delivery again: it is posted.
	_, err = b.ins.JobRetryTx(ctx, tx, first.Job.ID)
	require.NoError(t, err)
	resent, err := worker.WorkJob(ctx, t, tx, again.Job)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateCompleted, resent.Job.State)
	require.EqualValues(t, 2, posts.Load(), "send again posts")

	// A failed attempt is retried and posted.
	status.Store(500)
	failed, err := worker.Work(ctx, t, tx, riverjob.WebhookDeliverArgs{EndpointID: ep.ID, EventID: b.event(t, "code.issued")}, nil)
	require.ErrorContains(t, err, "500")
	require.Equal(t, river.EventKindJobFailed, failed.EventKind)
	status.Store(200)
	retried, err := worker.WorkJob(ctx, t, tx, failed.Job)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateCompleted, retried.Job.State)
	require.EqualValues(t, 4, posts.Load(), "a retry after a failure posts")
	require.Equal(t, 2, attempts(failed.Job.ID))
}
