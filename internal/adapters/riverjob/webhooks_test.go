package riverjob_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/testdb"
)

// A sweep whose process stopped mid-run stays running in River's table
// until River's rescuer returns it; the sweeps of the intervals after it
// run all the same, on the process that is left.
func TestASweepLeftRunningHoldsBackNoLaterSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	start := func(sweep func(context.Context) (int, error)) *riverjob.Worker {
		workers := river.NewWorkers()
		require.NoError(t, river.AddWorkerSafely(workers, &riverjob.WebhookSweepWorker{SweepFunc: sweep}))
		w, err := riverjob.NewWorker(pool, riverjob.Config{
			MaxWorkers: 4, FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond,
			RescueAfter: time.Hour,
		}, workers, []*river.PeriodicJob{riverjob.WebhookSweepPeriodic()}, nil)
		require.NoError(t, err)
		require.NoError(t, w.Start(ctx))
		return w
	}

	var (
		stuck   = make(chan struct{})
		release = make(chan struct{})
		calls   atomic.Int64
	)
	first := start(func(context.Context) (int, error) {
		if calls.Add(1) == 1 {
			close(stuck)
			// A process that stopped answering: its run never ends.
			<-release
		}
		return 0, nil
	})
	t.Cleanup(func() { close(release) })
	select {
	case <-stuck:
	case <-time.After(30 * time.Second):
		t.Fatal("the first sweep never ran")
	}
	// The first process stops working without its run ending.
	stopCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	require.Error(t, first.Stop(stopCtx), "the stuck run cannot end")

	var runs atomic.Int64
	second := start(func(context.Context) (int, error) {
		runs.Add(1)
		return 0, nil
	})
	t.Cleanup(func() {
		if err := second.Shutdown(10 * time.Second); err != nil {
			t.Logf("stop the second River worker: %v", err)
		}
	})
	require.Eventually(t, func() bool { return runs.Load() >= 2 }, 30*time.Second, 50*time.Millisecond,
		"later sweeps run while the first is left running")
	res, err := second.JobList(ctx, river.NewJobListParams().Kinds(riverjob.WebhookSweepArgs{}.Kind()).
		States(rivertype.JobStateRunning))
	require.NoError(t, err)
	require.NotEmpty(t, res.Jobs, "the stuck sweep is still running in River's table")
}
