package events_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/testdb"
)

// subs: a.one goes to both sinks, a.two to one, a.none to nobody.
var subs = []events.Subscription{
	{Kind: "test.sink", EventTypes: []string{"a.one", "a.two"}},
	{Kind: "test.other", EventTypes: []string{"a.one"}},
}

var relayTypes = []string{"a.one", "a.two", "a.none"}

func TestNewRelayRefusesBadSubscriptions(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	client := newRiverClient(t, pool)
	cases := []struct {
		name string
		subs []events.Subscription
	}{
		{"empty kind", []events.Subscription{{Kind: "", EventTypes: []string{"a"}}}},
		{"duplicate kind", []events.Subscription{{Kind: "k", EventTypes: []string{"a"}}, {Kind: "k", EventTypes: []string{"b"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := events.NewRelay(pool, client, tc.subs, events.RelayOptions{})
			require.Error(t, err)
		})
	}
}

// TestRelaysFanOutEveryEventExactlyOnce runs three relays (three replicas,
// each with its own pool) while eight goroutines record 5,000 events, then
// checks the jobs: one per event per matching subscriber, none missing, none
// doubled, and each event's fanout naming exactly its jobs.
func TestRelaysFanOutEveryEventExactlyOnce(t *testing.T) {
	t.Parallel()
	const total, writers = 5000, 8
	url := testdb.NewURL(t)
	writePool := newPool(t, url, writers)
	rec := events.NewRecorder(declared(relayTypes...), nil)
	counter := newFanOutCounter(total)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var relays sync.WaitGroup
	perRelay := make([]int, 3)
	var perMu sync.Mutex
	for i := range 3 {
		pool := newPool(t, url, 3)
		relay, err := events.NewRelay(pool, newRiverClient(t, pool), subs, events.RelayOptions{
			BatchSize:    200,
			PollInterval: 200 * time.Millisecond,
			Logger:       testLogger(t),
			OnFanOut: func(ids []uuid.UUID) {
				perMu.Lock()
				perRelay[i] += len(ids)
				perMu.Unlock()
				counter.hook(ids)
			},
		})
		require.NoError(t, err)
		relays.Go(func() {
			if err := relay.Run(ctx); err != nil {
				t.Errorf("relay %d: %v", i, err)
			}
		})
	}

	var writersWG sync.WaitGroup
	owner := uuid.New()
	for w := range writers {
		writersWG.Go(func() {
			for i := w; i < total; i += writers {
				err := pgx.BeginFunc(ctx, writePool, func(tx pgx.Tx) error {
					_, err := rec.With(tx).Record(ctx, owner, relayTypes[i%len(relayTypes)], "s", map[string]int{"i": i})
					return err
				})
				if err != nil {
					t.Errorf("record %d: %v", i, err)
					return
				}
			}
		})
	}
	writersWG.Wait()
	counter.wait(t, 2*time.Minute)
	cancel()
	relays.Wait()
	t.Logf("events fanned out per relay: %v", perRelay)

	var unfanned, poisoned int
	require.NoError(t, writePool.QueryRow(context.Background(),
		`SELECT count(*) FILTER (WHERE fanned_out_at IS NULL), count(*) FILTER (WHERE poisoned_at IS NOT NULL) FROM events`).
		Scan(&unfanned, &poisoned))
	require.Zero(t, unfanned, "events left behind")
	require.Zero(t, poisoned)
	require.Equal(t, total, counter.count(), "the hook saw an event twice")

	// Jobs per event per kind, against what the subscriptions want.
	type pair struct {
		event uuid.UUID
		kind  string
	}
	kindsOf := map[string][]string{"a.one": {"test.sink", "test.other"}, "a.two": {"test.sink"}}
	want, listed, entries := map[pair]int{}, map[int64]pair{}, 0
	rows, err := writePool.Query(context.Background(), `SELECT id, type, fanout FROM events`)
	require.NoError(t, err)
	for rows.Next() {
		var (
			id     uuid.UUID
			typ    string
			fanout []struct {
				Subscriber string `json:"subscriber"`
				JobID      int64  `json:"job_id"`
			}
		)
		require.NoError(t, rows.Scan(&id, &typ, &fanout))
		for _, kind := range kindsOf[typ] {
			want[pair{id, kind}] = 1
		}
		for _, f := range fanout {
			listed[f.JobID] = pair{id, f.Subscriber}
			entries++
		}
	}
	require.NoError(t, rows.Err())
	got := map[pair]int{}
	jobs := listJobs(t, writePool)
	for _, j := range jobs {
		got[pair{eventOf(t, j), j.Kind}]++
	}
	require.Equal(t, want, got, "(event, subscriber) pairs without exactly one job")

	// fanout names each event's jobs, and nothing else.
	require.Equal(t, len(jobs), entries, "fanout entries")
	require.Len(t, listed, len(jobs), "distinct jobs in fanout")
	for _, j := range jobs {
		require.Equal(t, pair{eventOf(t, j), j.Kind}, listed[j.ID], "job %d", j.ID)
	}
	var emptyFanout int
	require.NoError(t, writePool.QueryRow(context.Background(),
		`SELECT count(*) FROM events WHERE type = 'a.none' AND fanout = '[]'::jsonb`).Scan(&emptyFanout))
	wantEmpty := 0
	for i := range total {
		if relayTypes[i%len(relayTypes)] == "a.none" {
			wantEmpty++
		}
	}
	require.Equal(t, wantEmpty, emptyFanout)
}

// TestLateCommittingLowerSeqIsFannedOut: A records first (lower seq) but
// commits after B has been fanned out; A must still be fanned out.
func TestLateCommittingLowerSeqIsFannedOut(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	rec := events.NewRecorder(declared(relayTypes...), nil)
	relay, err := events.NewRelay(pool, newRiverClient(t, pool), subs, events.RelayOptions{Logger: testLogger(t)})
	require.NoError(t, err)
	owner := uuid.New()

	txA, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = txA.Rollback(ctx) }()
	idA, err := rec.With(txA).Record(ctx, owner, "a.two", "late", map[string]any{})
	require.NoError(t, err)
	idB := record(t, pool, rec, owner, "a.two")

	n, err := relay.FanOutOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "only B is committed")
	require.NoError(t, txA.Commit(ctx))
	n, err = relay.FanOutOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "A, although B's higher seq was claimed before")

	var seqA, seqB int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT seq FROM events WHERE id = $1`, idA).Scan(&seqA))
	require.NoError(t, pool.QueryRow(ctx, `SELECT seq FROM events WHERE id = $1`, idB).Scan(&seqB))
	require.Less(t, seqA, seqB, "the test must make A the lower seq")
	var unfanned int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE fanned_out_at IS NULL`).Scan(&unfanned))
	require.Zero(t, unfanned)
	require.Equal(t, 1, jobsFor(t, pool, idA, "test.sink"))
}

func jobsFor(t *testing.T, pool *pgxpool.Pool, eventID uuid.UUID, kind string) int {
	t.Helper()
	n := 0
	for _, j := range listJobs(t, pool, kind) {
		if eventOf(t, j) == eventID {
			n++
		}
	}
	return n
}

// TestSubscriberInsertFailurePoisonsAfterFiveAndReleaseRetries uses a
// subscription whose kind has no worker: River refuses to insert its jobs,
// which fails the batch. The good event is still fanned out on the
// one-by-one path; the bad one is retried, poisoned at the fifth failure,
// then released and fanned out by a relay whose configuration is fixed.
func TestSubscriberInsertFailurePoisonsAfterFiveAndReleaseRetries(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	m, err := events.NewMetrics(reg)
	require.NoError(t, err)
	rec := events.NewRecorder(declared("ok.type", "bad.type"), m)
	client := newRiverClient(t, pool)
	broken := []events.Subscription{
		{Kind: "test.sink", EventTypes: []string{"ok.type"}},
		{Kind: "test.unregistered", EventTypes: []string{"bad.type"}},
	}
	relay, err := events.NewRelay(pool, client, broken, events.RelayOptions{
		Metrics:      m,
		Logger:       testLogger(t),
		RetryBackoff: func(int) time.Duration { return 0 },
	})
	require.NoError(t, err)
	owner := uuid.New()
	bad := record(t, pool, rec, owner, "bad.type")
	good := record(t, pool, rec, owner, "ok.type")

	for attempt := 1; attempt <= events.DefaultMaxAttempts; attempt++ {
		n, err := relay.FanOutOnce(ctx)
		require.NoError(t, err)
		require.Positive(t, n)
		var (
			attempts int
			relayErr string
			poisoned bool
		)
		require.NoError(t, pool.QueryRow(ctx,
			`SELECT relay_attempts, relay_error, poisoned_at IS NOT NULL FROM events WHERE id = $1`, bad).
			Scan(&attempts, &relayErr, &poisoned))
		require.Equal(t, attempt, attempts)
		require.Contains(t, relayErr, "test.unregistered")
		require.Equal(t, attempt == events.DefaultMaxAttempts, poisoned, "attempt %d", attempt)
	}
	require.Equal(t, 1, jobsFor(t, pool, good, "test.sink"), "the good event is not held back")
	n, err := relay.FanOutOnce(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a poisoned event is not claimed")
	require.InDelta(t, 1, metricValue(t, reg, "standmeet_events_poisoned_total", "", ""), 0)
	require.InDelta(t, 5, metricValue(t, reg, "standmeet_events_relay_failures_total", "", ""), 0)

	store := events.NewStore(pool)
	page, err := store.ListPoisoned(ctx, owner, 10, "")
	require.NoError(t, err)
	require.Len(t, page.Events, 1)
	require.Equal(t, bad, page.Events[0].ID)
	require.Equal(t, 5, page.Events[0].RelayAttempts)

	released, err := store.Release(ctx, owner, bad)
	require.NoError(t, err)
	require.Nil(t, released.PoisonedAt)
	require.Zero(t, released.RelayAttempts)

	fixed, err := events.NewRelay(pool, client, []events.Subscription{
		{Kind: "test.sink", EventTypes: []string{"ok.type", "bad.type"}},
	}, events.RelayOptions{Logger: testLogger(t)})
	require.NoError(t, err)
	n, err = fixed.FanOutOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, 1, jobsFor(t, pool, bad, "test.sink"))
	var fanout json.RawMessage
	require.NoError(t, pool.QueryRow(ctx, `SELECT fanout FROM events WHERE id = $1`, bad).Scan(&fanout))
	require.Contains(t, string(fanout), `"subscriber": "test.sink"`)
}

// TestFailedEventWaitsForItsBackoff: with the default backoff a failed event
// is not claimed again at once (the five attempts are spread out).
func TestFailedEventWaitsForItsBackoff(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	rec := events.NewRecorder(declared("bad.type"), nil)
	relay, err := events.NewRelay(pool, newRiverClient(t, pool), []events.Subscription{
		{Kind: "test.unregistered", EventTypes: []string{"bad.type"}},
	}, events.RelayOptions{Logger: testLogger(t)})
	require.NoError(t, err)
	record(t, pool, rec, uuid.New(), "bad.type")
	n, err := relay.FanOutOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = relay.FanOutOnce(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "retried before its backoff")
	var retryIn float64
	require.NoError(t, pool.QueryRow(ctx,
		`SELECT extract(epoch FROM relay_retry_at - clock_timestamp()) FROM events`).Scan(&retryIn))
	require.Greater(t, retryIn, 0.0)
}

// TestAQuietEventCommittedLateIsFannedOutBeforeThePoll: an event written
// in the NotifySpacing after another queues no wake-up of its own, and its
// transaction may commit after the relay's first trailing look; a later
// trailing look finds it, long before the one-minute poll.
func TestAQuietEventCommittedLateIsFannedOutBeforeThePoll(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := events.NewMetrics(prometheus.NewRegistry())
	require.NoError(t, err)
	rec := events.NewRecorder(declared(relayTypes...), m)
	fanned := make(chan uuid.UUID, 16)
	_, done := runQuietRelay(ctx, t, pool, m, fanned)

	owner := uuid.New()
	// The relay is listening, and the looks after its start are over.
	warm := record(t, pool, rec, owner, "a.one")
	requireFanned(t, fanned, warm, 30*time.Second, "the first event was not fanned out")
	time.Sleep(time.Second)
	// The first write queues the wake-up; the second, right after it,
	// does not, and its transaction stays open past the first trailing
	// look.
	loud, err := pool.Begin(ctx)
	require.NoError(t, err)
	first, err := rec.With(loud).Record(ctx, owner, "a.one", "s", map[string]any{})
	require.NoError(t, err)
	quiet, err := pool.Begin(ctx)
	require.NoError(t, err)
	second, err := rec.With(quiet).Record(ctx, owner, "a.one", "s", map[string]any{})
	require.NoError(t, err)
	require.NoError(t, loud.Commit(ctx))
	requireFanned(t, fanned, first, 30*time.Second, "the notified event was not fanned out")
	time.Sleep(8 * events.NotifySpacing)
	require.NoError(t, quiet.Commit(ctx))
	requireFanned(t, fanned, second, 10*time.Second, "the event committed after the trailing look waited for the poll")
	cancel()
	require.NoError(t, <-done)
}

// TestNotificationWakesTheRelay: with a one-minute poll, events are fanned
// out because the relay is notified. The median commit-to-fan-out time is
// logged, not asserted.
func TestNotificationWakesTheRelay(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := prometheus.NewRegistry()
	m, err := events.NewMetrics(reg)
	require.NoError(t, err)
	rec := events.NewRecorder(declared(relayTypes...), m)
	fanned := make(chan uuid.UUID, 1024)
	relay, done := runQuietRelay(ctx, t, pool, m, fanned)

	const rounds = 100
	owner := uuid.New()
	latencies := make([]time.Duration, 0, rounds)
	for range rounds {
		id := record(t, pool, rec, owner, "a.one")
		committed := time.Now()
		deadline := time.After(30 * time.Second)
	wait:
		for {
			select {
			case got := <-fanned:
				if got == id {
					break wait
				}
			case <-deadline:
				t.Fatalf("event %s not fanned out within 30s of commit (poll is 1 minute)", id)
			}
		}
		latencies = append(latencies, time.Since(committed))
	}
	byNotify, byPoll := relay.Wakeups()
	cancel()
	require.NoError(t, <-done)

	require.Positive(t, byNotify, "the notification path was not taken")
	require.Zero(t, byPoll, "the poll fired although it is a minute away")
	require.Positive(t, metricValue(t, reg, "standmeet_events_relay_wakeups_total", "by", "notify"))
	slices.Sort(latencies)
	t.Logf("commit-to-fan-out over %d events (poll interval 1m): p50 %s, p90 %s, max %s; wake-ups by notify %d, by poll %d",
		rounds, latencies[rounds/2], latencies[rounds*9/10], latencies[rounds-1], byNotify, byPoll)
}

// TestRelaySurvivesAListenerDisconnect kills the relay's LISTEN session; the
// relay reconnects and notifications wake it again.
func TestRelaySurvivesAListenerDisconnect(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := events.NewRecorder(declared(relayTypes...), nil)
	fanned := make(chan uuid.UUID, 16)
	relay, done := runQuietRelay(ctx, t, pool, nil, fanned)

	waitFor := func(id uuid.UUID) {
		t.Helper()
		select {
		case got := <-fanned:
			require.Equal(t, id, got)
		case <-time.After(30 * time.Second):
			t.Fatalf("event %s not fanned out", id)
		}
	}
	waitFor(record(t, pool, rec, uuid.New(), "a.two"))
	notifyBefore, _ := relay.Wakeups()

	// The first event may have been fanned out by the start-up drain before
	// the listener ran LISTEN: wait for its session, then end it.
	var killed int
	require.Eventually(t, func() bool {
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM (
  SELECT pg_terminate_backend(pid) FROM pg_stat_activity
  WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()) t`).Scan(&killed))
		return killed > 0
	}, 10*time.Second, 10*time.Millisecond, "the relay's listener session never appeared")
	require.Equal(t, 1, killed, "the relay's listener session")

	waitFor(record(t, pool, rec, uuid.New(), "a.two"))
	// An event recorded once the reconnect drain has finished can only be
	// delivered by a notification (the poll is a minute away). The drain
	// may still be running when the next one commits and take it too, so
	// record one at a time until a notification delivers one.
	var notifyAfter, byPoll int64
	for i := 0; i < 20 && notifyAfter <= notifyBefore; i++ {
		waitFor(record(t, pool, rec, uuid.New(), "a.two"))
		notifyAfter, byPoll = relay.Wakeups()
	}
	require.Greater(t, notifyAfter, notifyBefore, "no notification after the listener reconnected")
	require.Zero(t, byPoll)
	cancel()
	require.NoError(t, <-done)
}

// TestMetricsFollowTheBacklog: lag rows count the un-fanned events and fall
// to zero after a fan-out; the fan-out counters and batch histogram move.
func TestMetricsFollowTheBacklog(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	m, err := events.NewMetrics(reg)
	require.NoError(t, err)
	rec := events.NewRecorder(declared(relayTypes...), m)
	relay, err := events.NewRelay(pool, newRiverClient(t, pool), subs, events.RelayOptions{Metrics: m, Logger: testLogger(t)})
	require.NoError(t, err)
	owner := uuid.New()
	for range 3 {
		record(t, pool, rec, owner, "a.two")
	}
	_, err = pool.Exec(ctx, `UPDATE events SET occurred_at = now() - interval '1 minute'`)
	require.NoError(t, err)

	require.NoError(t, relay.RefreshLag(ctx))
	require.InDelta(t, 3, metricValue(t, reg, "standmeet_events_relay_lag_rows", "", ""), 0)
	require.GreaterOrEqual(t, metricValue(t, reg, "standmeet_events_relay_lag_seconds", "", ""), 60.0)

	n, err := relay.FanOutOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.NoError(t, relay.RefreshLag(ctx))
	require.Zero(t, metricValue(t, reg, "standmeet_events_relay_lag_rows", "", ""))
	require.Zero(t, metricValue(t, reg, "standmeet_events_relay_lag_seconds", "", ""))
	require.InDelta(t, 3, metricValue(t, reg, "standmeet_events_fanned_out_total", "type", "a.two"), 0)
	require.InDelta(t, 3, metricValue(t, reg, "standmeet_events_recorded_total", "type", "a.two"), 0)

	families, err := reg.Gather()
	require.NoError(t, err)
	var batches uint64
	for _, f := range families {
		if f.GetName() == "standmeet_events_fanout_batch_size" {
			batches = f.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	require.EqualValues(t, 1, batches)
}

// TestRelayClaimsEventsInSeqOrder: events whose ids run against their seq
// (ids descending) and whose rows were moved in the heap (an update writes a
// new row version at its end) are claimed, batch by batch and within each
// batch, in seq order: neither the id nor the physical order leaks into the
// claim.
func TestRelayClaimsEventsInSeqOrder(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	const n, batch = 40, 6
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = uuid.New()
	}
	// Descending ids: the i-th insert gets seq i+1 and the i-th largest id.
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(b[:], a[:]) })
	owner := uuid.New()
	for _, id := range ids {
		_, err := pool.Exec(ctx, `INSERT INTO events (id, owner_id, type, subject) VALUES ($1, $2, 'a.two', 's')`, id, owner)
		require.NoError(t, err)
	}
	// Move the first half's rows to the end of the heap.
	_, err := pool.Exec(ctx, `UPDATE events SET subject = 'moved' WHERE seq <= (SELECT min(seq) FROM events) + $1`, n/2-1)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `ANALYZE events`)
	require.NoError(t, err)

	var mu sync.Mutex
	var batches [][]uuid.UUID
	relay, err := events.NewRelay(pool, newRiverClient(t, pool), subs, events.RelayOptions{Logger: testLogger(t), BatchSize: batch,
		OnFanOut: func(got []uuid.UUID) {
			mu.Lock()
			defer mu.Unlock()
			batches = append(batches, got)
		}})
	require.NoError(t, err)
	for i := 0; i < n; i += batch {
		_, err := relay.FanOutOnce(ctx)
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	var claimed []uuid.UUID
	for i, b := range batches {
		require.LessOrEqual(t, len(b), batch, "batch %d", i)
		claimed = append(claimed, b...)
	}
	require.Equal(t, ids, claimed, "claimed in seq order, batch after batch")
}

// A subscription that says which owners it has work for gets jobs for
// their events only, the others' events are fanned out all the same (to
// nobody of that subscription), and it is asked once per batch with the
// batch's owners.
func TestRelayAsksASubscriptionWhichOwnersItWants(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	busy, idle := uuid.New(), uuid.New()
	// The query logs each question (the owners asked) to a table of the test.
	_, err := pool.Exec(ctx, `CREATE TABLE asked (owners uuid[] NOT NULL)`)
	require.NoError(t, err)
	picky := []events.Subscription{
		{Kind: sinkArgs{}.Kind(), EventTypes: []string{"a.one", "a.two"}, Owners: events.OwnersQuery(fmt.Sprintf(
			`WITH log AS (INSERT INTO asked VALUES ($1::uuid[])) SELECT o FROM unnest($1::uuid[]) AS o WHERE o = '%s'`, busy))},
		{Kind: otherArgs{}.Kind(), EventTypes: []string{"a.two"}},
	}
	rec := events.NewRecorder(func(string) bool { return true }, nil)
	var busyEvents, idleEvents []uuid.UUID
	for range 3 {
		busyEvents = append(busyEvents, record(t, pool, rec, busy, "a.two"))
		idleEvents = append(idleEvents, record(t, pool, rec, idle, "a.two"))
	}
	relay, err := events.NewRelay(pool, newRiverClient(t, pool), picky, events.RelayOptions{Logger: testLogger(t), BatchSize: 100})
	require.NoError(t, err)
	n, err := relay.FanOutOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 6, n)

	rows, err := pool.Query(ctx, `SELECT owners FROM asked`)
	require.NoError(t, err)
	calls, err := pgx.CollectRows(rows, pgx.RowTo[[]uuid.UUID])
	require.NoError(t, err)
	require.Len(t, calls, 1, "one question per batch")
	require.ElementsMatch(t, []uuid.UUID{busy, idle}, calls[0])
	var sunk, other []uuid.UUID
	for _, j := range listJobs(t, pool, sinkArgs{}.Kind()) {
		sunk = append(sunk, eventOf(t, j))
	}
	for _, j := range listJobs(t, pool, otherArgs{}.Kind()) {
		other = append(other, eventOf(t, j))
	}
	require.ElementsMatch(t, busyEvents, sunk, "jobs for the wanted owner's events only")
	require.ElementsMatch(t, append(slices.Clone(busyEvents), idleEvents...), other, "a subscription without Owners takes every owner")
	var unfanned int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE fanned_out_at IS NULL`).Scan(&unfanned))
	require.Zero(t, unfanned, "every event is fanned out")

	// The question's error fails the batch, which is then retried event by
	// event; nothing is lost.
	failing := []events.Subscription{{Kind: sinkArgs{}.Kind(), EventTypes: []string{"a.one"},
		Owners: `SELECT o FROM unnest($1::uuid[]) AS o JOIN endpoints_unreadable ON true`}}
	record(t, pool, rec, busy, "a.one")
	relay, err = events.NewRelay(pool, newRiverClient(t, pool), failing, events.RelayOptions{Logger: testLogger(t), BatchSize: 100})
	require.NoError(t, err)
	_, err = relay.FanOutOnce(ctx)
	require.NoError(t, err)
	var attempts int
	var relayErr string
	require.NoError(t, pool.QueryRow(ctx, `SELECT relay_attempts, relay_error FROM events WHERE type = 'a.one'`).Scan(&attempts, &relayErr))
	require.Equal(t, 1, attempts)
	require.Contains(t, relayErr, "endpoints_unreadable")
}

// TestABurstQueuesFewWakeUpsAndEveryEventIsFannedOut: back-to-back
// transactions queue at most one wake-up per NotifySpacing, and the events
// written without one are still fanned out at once (the poll is a minute
// away), by the look the relay takes NotifySpacing after each wake-up.
func TestABurstQueuesFewWakeUpsAndEveryEventIsFannedOut(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// A session of the test's own counts the wake-ups the burst queues.
	pc, err := pool.Acquire(ctx)
	require.NoError(t, err)
	listener := pc.Hijack()
	defer func() { require.NoError(t, listener.Close(context.Background())) }()
	_, err = listener.Exec(ctx, `LISTEN `+events.Channel)
	require.NoError(t, err)

	rec := events.NewRecorder(declared(relayTypes...), nil)
	const burst = 200
	fanned := make(chan uuid.UUID, burst)
	relay, done := runQuietRelay(ctx, t, pool, nil, fanned)

	want := map[uuid.UUID]bool{}
	start := time.Now()
	for range burst {
		want[record(t, pool, rec, uuid.New(), "a.two")] = true
	}
	took := time.Since(start)
	deadline := time.After(15 * time.Second)
	for len(want) > 0 {
		select {
		case id := <-fanned:
			delete(want, id)
		case <-deadline:
			t.Fatalf("%d of %d events not fanned out within 15 s (the poll is a minute away)", len(want), burst)
		}
	}
	_, byPoll := relay.Wakeups()
	cancel()
	require.NoError(t, <-done)
	require.Zero(t, byPoll)

	notified := 0
	for {
		wait, stop := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := listener.WaitForNotification(wait)
		stop()
		if err != nil {
			break
		}
		notified++
	}
	most := int(took/events.NotifySpacing) + 1
	t.Logf("%d transactions in %s queued %d wake-ups (at most %d)", burst, took, notified, most)
	require.LessOrEqual(t, notified, most, "more wake-ups than one per NotifySpacing")
	require.Less(t, notified, burst)
}

// runQuietRelay runs a relay whose poll is a minute away, so only
// notifications and the looks after them wake it; it sends the ids it fans
// out to fanned and counts into m (nil: no metrics). done receives Run's
// result once ctx ends.
// requireFanned requires want to be the next event fanned out, within
// limit; failing says what it means if not.
func requireFanned(t *testing.T, fanned <-chan uuid.UUID, want uuid.UUID, limit time.Duration, failing string) {
	t.Helper()
	select {
	case got := <-fanned:
		require.Equal(t, want, got)
	case <-time.After(limit):
		t.Fatal(failing)
	}
}

func runQuietRelay(ctx context.Context, t *testing.T, pool *pgxpool.Pool, m *events.Metrics, fanned chan<- uuid.UUID) (*events.Relay, <-chan error) {
	t.Helper()
	relay, err := events.NewRelay(pool, newRiverClient(t, pool), subs, events.RelayOptions{
		PollInterval: time.Minute,
		Metrics:      m,
		Logger:       testLogger(t),
		OnFanOut: func(ids []uuid.UUID) {
			for _, id := range ids {
				fanned <- id
			}
		},
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- relay.Run(ctx) }()
	return relay, done
}
