package webhookdb_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/webhookdb"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// laneSet records the queues Lanes adds and removes.
type laneSet struct {
	mu      sync.Mutex
	added   []string
	removed []string
}

func (q *laneSet) AddQueue(name string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.added = append(q.added, name)
	return nil
}

func (q *laneSet) RemoveQueue(_ context.Context, name string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.removed = append(q.removed, name)
	return nil
}

func (q *laneSet) wasAdded(name string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Contains(q.added, name)
}

func (q *laneSet) wasRemoved(name string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Contains(q.removed, name)
}

// leftIn queues a delivery job on the River queue name, as a fan-out on
// that lane would have, and returns its id.
func (b *bundle) leftIn(t *testing.T, name string) int64 {
	t.Helper()
	res, err := b.ins.Insert(context.Background(), riverjob.WebhookDeliverArgs{EndpointID: uuid.New(), EventID: uuid.New()},
		&river.InsertOpts{Queue: name})
	require.NoError(t, err)
	return res.Job.ID
}

// run runs lanes until the returned function stops it and checks that
// Run ended cleanly.
func run(t *testing.T, lanes *webhookdb.Lanes) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lanes.Run(ctx) }()
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

func (b *bundle) lane(t *testing.T, name string, aliveFor time.Duration) {
	t.Helper()
	_, err := b.pool.Exec(context.Background(), `INSERT INTO webhook_lanes (lane, alive_until) VALUES ($1, now() + $2::interval)`,
		name, aliveFor.String())
	require.NoError(t, err)
}

// A fan-out puts every chain delivery of an endpoint on the same alive
// lane, spreads the endpoints over the alive lanes, and never uses a lapsed
// one; with no lane alive, deliveries go to the shared webhooks queue.
func TestEnqueuePutsAnEndpointsChainOnOneAliveLane(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var eps []uuid.UUID
	for range 20 {
		eps = append(eps, b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`).ID)
	}
	enqueue := func() map[uuid.UUID][]string {
		var ds []delivery.Delivery
		for range 2 {
			ev := b.event(t, "code.issued")
			for _, ep := range eps {
				ds = append(ds, delivery.Delivery{EndpointID: ep, EventID: ev, Chain: true})
			}
		}
		// One fan-out is one event: each call queues one delivery per endpoint.
		queues := map[uuid.UUID][]string{}
		for i := 0; i < len(ds); i += len(eps) {
			res, err := b.store.Enqueue(ctx, ds[i:i+len(eps)], delivery.Summary{})
			require.NoError(t, err)
			for j, r := range res {
				queues[ds[i+j].EndpointID] = append(queues[ds[i+j].EndpointID], b.job(t, r.JobID).Queue)
			}
		}
		return queues
	}

	for ep, qs := range enqueue() {
		require.Equal(t, []string{riverjob.QueueWebhooks, riverjob.QueueWebhooks}, qs, "no lane is alive: endpoint %s", ep)
	}

	b.lane(t, "webhooks_aaaa", time.Hour)
	b.lane(t, "webhooks_bbbb", time.Hour)
	b.lane(t, "webhooks_dead", -time.Second)
	used := map[string]int{}
	for ep, qs := range enqueue() {
		require.Len(t, qs, 2)
		require.Equal(t, qs[0], qs[1], "endpoint %s's deliveries share a lane", ep)
		require.Contains(t, []string{"webhooks_aaaa", "webhooks_bbbb"}, qs[0], "endpoint %s is on an alive lane", ep)
		used[qs[0]]++
	}
	require.Len(t, used, 2, "the endpoints are spread over both alive lanes: %v", used)
}

// Lanes adds its own queue, renews its lane while it runs and lapses it
// when stopped; it works a lapsed lane while jobs are left in it and stops
// when they are gone; it forgets lanes lapsed long ago with nothing left.
func TestLanesWorkALapsedLaneUntilItsJobsAreGone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	qs := &laneSet{}
	lanes, err := webhookdb.NewLanes(b.store, qs, true, nil)
	require.NoError(t, err)
	require.Equal(t, []string{lanes.Name()}, qs.added, "its own lane is added before River starts")
	alive := func() bool {
		var ok bool
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT alive_until > now() FROM webhook_lanes WHERE lane = $1`, lanes.Name()).Scan(&ok))
		return ok
	}
	require.NoError(t, lanes.Start(ctx))
	require.True(t, alive(), "the lane is alive once started")

	b.lane(t, "webhooks_gone", -time.Second)
	b.lane(t, "webhooks_old", -2*webhookdb.LaneForget)
	job := b.leftIn(t, "webhooks_gone")
	stop := run(t, lanes)

	require.Eventually(t, func() bool { return qs.wasAdded("webhooks_gone") },
		10*time.Second, 20*time.Millisecond, "a lapsed lane with a job left is worked")
	require.False(t, qs.wasAdded("webhooks_old"), "a lane with nothing left is not worked")
	require.True(t, alive(), "the running process's lane is alive")
	var old int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_lanes WHERE lane = 'webhooks_old'`).Scan(&old))
	require.Zero(t, old, "a lane lapsed long ago with nothing left is forgotten")

	_, err = b.ins.JobDelete(ctx, job)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return qs.wasRemoved("webhooks_gone") },
		10*time.Second, 20*time.Millisecond, "a lapsed lane is no longer worked once its jobs are gone")

	stop()
	require.False(t, alive(), "a stopped process's lane lapses at once")
}

// With STANDMEET_WEBHOOK_LANES off a process has no lane of its own (its
// deliveries stay on the shared queue) but still works a lapsed lane.
func TestLanesOffStillWorkLapsedLanes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	qs := &laneSet{}
	lanes, err := webhookdb.NewLanes(b.store, qs, false, nil)
	require.NoError(t, err)
	require.Empty(t, lanes.Name())
	require.Empty(t, qs.added)

	b.lane(t, "webhooks_gone", -time.Second)
	b.leftIn(t, "webhooks_gone")
	stop := run(t, lanes)
	require.Eventually(t, func() bool { return qs.wasAdded("webhooks_gone") }, 10*time.Second, 20*time.Millisecond)
	stop()
	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_lanes WHERE lane <> 'webhooks_gone'`).Scan(&n))
	require.Zero(t, n, "a process without a lane registers none")
}

// A chain whose only delivery in River is a run that has been running
// longer than any live run can (its process died; River's rescuer returns
// it only minutes later) is restarted by the sweep: its pending deliveries
// do not wait for the rescuer.
func TestSweepRestartsAChainWhoseRunDiedWithItsProcess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	first, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: b.event(t, "code.issued"), Chain: true}}, delivery.Summary{})
	require.NoError(t, err)
	// The window is full: the next delivery waits pending.
	_, err = b.pool.Exec(ctx, `UPDATE webhook_endpoint_queues SET running = $2 WHERE endpoint_id = $1`, ep.ID, delivery.ChainWindow)
	require.NoError(t, err)
	second, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: b.event(t, "code.issued"), Chain: true}}, delivery.Summary{})
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStatePending, b.job(t, second[0].JobID).State)

	// A process fetches the first delivery and never finishes it.
	workers := river.NewWorkers()
	unblock := make(chan struct{})
	river.AddWorker(workers, river.WorkFunc(func(context.Context, *river.Job[riverjob.WebhookDeliverArgs]) error {
		<-unblock
		return nil
	}))
	c, err := river.NewClient(riverpgxv5.New(b.pool), &river.Config{
		Queues:  map[string]river.QueueConfig{riverjob.QueueWebhooks: {MaxWorkers: 1}},
		Workers: workers, FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() {
		close(unblock)
		require.NoError(t, c.Stop(context.Background()))
	})
	require.Eventually(t, func() bool { return b.job(t, first[0].JobID).State == rivertype.JobStateRunning }, 10*time.Second, 20*time.Millisecond)

	n, err := b.store.SweepChains(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a run that may still be alive holds the chain")
	require.Equal(t, rivertype.JobStatePending, b.job(t, second[0].JobID).State)

	time.Sleep(delivery.JobTimeout + 6*time.Second)
	n, err = b.store.SweepChains(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the dead run no longer holds the chain")
	require.Equal(t, rivertype.JobStateAvailable, b.job(t, second[0].JobID).State)
}
