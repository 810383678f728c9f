package riverjob_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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

// TestNotifiedQueuesStartByNotificationDeliveryQueuesByPoll pins the
// premise of the two polls: with the notified queues' poll far beyond the
// test's bound, a job inserted into each of them still starts (River's
// insert notification starts it), and a pending job on the delivery queue
// made available with JobRetryTx, which notifies no one, starts at the
// delivery queue's own short poll.
func TestNotifiedQueuesStartByNotificationDeliveryQueuesByPoll(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pool := testdb.New(t)

	workers := river.NewWorkers()
	require.NoError(t, river.AddWorkerSafely(workers, pollProbeWorker{}))
	w, err := riverjob.NewWorker(pool, riverjob.Config{
		MaxWorkers: 4, FetchCooldown: 10 * time.Millisecond,
		FetchPollInterval: 50 * time.Millisecond, NotifiedPollInterval: time.Hour,
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

	want := map[int64]string{}
	for _, q := range []string{riverjob.QueueDefault, riverjob.QueueInbound, riverjob.QueueCorpus} {
		// Beyond the inserter's notification limit, so each insert notifies.
		time.Sleep(30 * time.Millisecond)
		res, err := ins.Insert(ctx, pollProbeArgs{}, &river.InsertOpts{Queue: q})
		require.NoError(t, err)
		want[res.Job.ID] = q
	}
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
	want[pending] = riverjob.QueueWebhooks

	deadline := time.After(20 * time.Second) // far under the hour's poll: a bound on a hang
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
