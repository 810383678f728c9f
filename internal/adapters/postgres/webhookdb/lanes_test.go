package webhookdb_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
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

// A fan-out puts each endpoint's delivery due now on one alive lane,
// available: the same lane fan-out after fan-out, the endpoints spread over
// every alive lane, a lapsed lane never chosen, and a lane that lapses moves
// only the endpoints it had (rendezvous hashing). With no lane alive those
// deliveries go on the shared webhooks queue, and a cooled-down delivery
// always does, scheduled.
func TestEnqueuePutsAnEndpointsDeliveriesOnOneAliveLane(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var eps []uuid.UUID
	for range 40 {
		eps = append(eps, b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`).ID)
	}
	cooled := b.endpoint(t, `{"url":"https://b.example/h","event_types":["*"]}`).ID
	// fanout queues one event's deliveries, one due now to each endpoint of
	// eps and one cooled down to cooled, and returns the queue of each
	// endpoint's delivery due now.
	fanout := func() map[uuid.UUID]string {
		t.Helper()
		ev := b.event(t, "code.issued")
		ds := []delivery.Delivery{{EndpointID: cooled, EventID: ev, ScheduledAt: time.Now().Add(time.Hour), Wait: delivery.ReasonCoolingDown}}
		for _, ep := range eps {
			ds = append(ds, delivery.Delivery{EndpointID: ep, EventID: ev})
		}
		res, err := b.store.Enqueue(ctx, ds, delivery.Summary{})
		require.NoError(t, err)
		require.Len(t, res, len(ds))
		j := b.job(t, res[0].JobID)
		require.Equal(t, riverjob.QueueWebhooks, j.Queue, "a cooled-down delivery waits on the shared queue")
		require.Equal(t, rivertype.JobStateScheduled, j.State)
		queues := map[uuid.UUID]string{}
		for i, r := range res[1:] {
			j := b.job(t, r.JobID)
			require.Equal(t, rivertype.JobStateAvailable, j.State, "endpoint %s", eps[i])
			queues[eps[i]] = j.Queue
		}
		return queues
	}

	for ep, q := range fanout() {
		require.Equal(t, riverjob.QueueWebhooks, q, "no lane is alive: endpoint %s", ep)
	}

	alive := []string{"webhooks_aaaa", "webhooks_bbbb", "webhooks_cccc"}
	for _, l := range alive {
		b.lane(t, l, time.Hour)
	}
	b.lane(t, "webhooks_dead", -time.Second)
	first := fanout()
	used := map[string]int{}
	for ep, q := range first {
		require.Contains(t, alive, q, "endpoint %s is on an alive lane", ep)
		used[q]++
	}
	require.Len(t, used, len(alive), "the endpoints are spread over every alive lane: %v", used)
	require.Equal(t, first, fanout(), "each endpoint keeps its lane from one fan-out to the next")

	_, err := b.pool.Exec(ctx, `UPDATE webhook_lanes SET alive_until = now() - interval '1 second' WHERE lane = $1`, alive[2])
	require.NoError(t, err)
	for ep, q := range fanout() {
		if first[ep] == alive[2] {
			require.Contains(t, alive[:2], q, "endpoint %s leaves the lapsed lane for an alive one", ep)
		} else {
			require.Equal(t, first[ep], q, "endpoint %s, not on the lapsed lane, stays where it was", ep)
		}
	}
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

// Starting the lanes makes available the deliveries an earlier version
// left in River's pending state.
func TestLanesStartReleasesPendingDeliveries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	left, err := b.ins.Insert(ctx, riverjob.WebhookDeliverArgs{EndpointID: uuid.New(), EventID: uuid.New()}, &river.InsertOpts{Pending: true})
	require.NoError(t, err)
	lanes, err := webhookdb.NewLanes(b.store, &laneSet{}, true, nil)
	require.NoError(t, err)
	require.NoError(t, lanes.Start(ctx))
	require.Equal(t, rivertype.JobStateAvailable, b.job(t, left.Job.ID).State)
}
