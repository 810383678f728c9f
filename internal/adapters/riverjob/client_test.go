package riverjob_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/testdb"
)

type pollProbeArgs struct{}

func (pollProbeArgs) Kind() string { return "test.poll_probe" }

type pollProbeWorker struct {
	river.WorkerDefaults[pollProbeArgs]
}

func (pollProbeWorker) Work(context.Context, *river.Job[pollProbeArgs]) error { return nil }

// startProbes starts a worker client on a fresh database with every queue
// polling at poll, and returns it, an inserter and the channel of its
// completed jobs and the database's pool.
func startProbes(t *testing.T, poll time.Duration) (*riverjob.Worker, *riverjob.Inserter, <-chan *river.Event, *pgxpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pool := testdb.New(t)
	workers := river.NewWorkers()
	require.NoError(t, river.AddWorkerSafely(workers, pollProbeWorker{}))
	w, err := riverjob.NewWorker(pool, riverjob.Config{
		MaxWorkers: 4, FetchCooldown: 10 * time.Millisecond, FetchPollInterval: poll,
	}, workers, nil, nil)
	require.NoError(t, err)
	completed, stopSub := w.Subscribe(river.EventKindJobCompleted)
	t.Cleanup(stopSub)
	require.NoError(t, w.Start(ctx))
	t.Cleanup(func() {
		if err := w.Shutdown(10 * time.Second); err != nil {
			t.Logf("stop the River client: %v", err)
		}
	})
	ins, err := riverjob.NewInserter(pool, 0, nil)
	require.NoError(t, err)
	// Let the producers make their first fetch, so what follows is found by
	// a notification or a poll, not by that start.
	time.Sleep(300 * time.Millisecond)
	return w, ins, completed, pool
}

// awaitCompleted waits until every job of want (queue by id) has completed
// in its queue; bound is a bound on a hang.
func awaitCompleted(t *testing.T, completed <-chan *river.Event, want map[int64]string, bound time.Duration) {
	t.Helper()
	deadline := time.After(bound)
	for len(want) > 0 {
		select {
		case ev := <-completed:
			require.Contains(t, want, ev.Job.ID)
			require.Equal(t, want[ev.Job.ID], ev.Job.Queue)
			delete(want, ev.Job.ID)
		case <-deadline:
			t.Fatalf("jobs never started (queue by id): %v", want)
		}
	}
}

// TestInsertedJobsStartByNotification pins the premise of one poll for
// every queue: with the poll far beyond the test's bound, a job inserted
// into each queue still starts, because River's insert notification starts
// it.
func TestInsertedJobsStartByNotification(t *testing.T) {
	t.Parallel()
	_, ins, completed, _ := startProbes(t, time.Hour)
	want := map[int64]string{}
	for _, q := range []string{riverjob.QueueDefault, riverjob.QueueInbound, riverjob.QueueCorpus, riverjob.QueueWebhooks} {
		// Beyond the inserter's notification limit, so each insert notifies.
		time.Sleep(30 * time.Millisecond)
		res, err := ins.Insert(context.Background(), pollProbeArgs{}, &river.InsertOpts{Queue: q})
		require.NoError(t, err)
		want[res.Job.ID] = q
	}
	awaitCompleted(t, completed, want, 20*time.Second) // far under the hour's poll
}

// TestARetriedDeliveryStartsAtThePoll: a pending delivery made available
// with JobRetryTx (a woken delivery), which notifies no producer, starts
// at the poll.
func TestARetriedDeliveryStartsAtThePoll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, ins, completed, pool := startProbes(t, 100*time.Millisecond)
	var pending int64
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		res, err := ins.InsertTx(ctx, tx, pollProbeArgs{}, &river.InsertOpts{Queue: riverjob.QueueWebhooks, Pending: true})
		if err != nil {
			return err
		}
		pending = res.Job.ID
		return nil
	}))
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := w.JobRetryTx(ctx, tx, pending)
		return err
	}))
	awaitCompleted(t, completed, map[int64]string{pending: riverjob.QueueWebhooks}, 20*time.Second)
}
