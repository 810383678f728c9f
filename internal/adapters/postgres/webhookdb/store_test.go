package webhookdb_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/postgres/webhookdb"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/owner/webhook"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
	"github.com/standmeet/standmeet/internal/testdb"
)

type bundle struct {
	pool  *pgxpool.Pool
	ins   *riverjob.Inserter
	svc   *webhook.Service
	store *webhookdb.Store
	rec   *events.Recorder
	owner uuid.UUID
}

func isDeclared(name string) bool { _, ok := domain.LookupEventType(name); return ok }

// job reads a job through River's client.
func (b *bundle) job(t *testing.T, id int64) *rivertype.JobRow {
	t.Helper()
	j, err := b.ins.JobGet(context.Background(), id)
	require.NoError(t, err)
	return j
}

// deliveryArgs decodes a delivery job's args.
func deliveryArgs(t *testing.T, j *rivertype.JobRow) riverjob.WebhookDeliverArgs {
	t.Helper()
	var a riverjob.WebhookDeliverArgs
	require.NoError(t, json.Unmarshal(j.EncodedArgs, &a))
	return a
}

// deliveryJobs lists the delivery jobs through River's client, narrowed by
// params' other filters when given.
func (b *bundle) deliveryJobs(t *testing.T, params *river.JobListParams) []*rivertype.JobRow {
	t.Helper()
	if params == nil {
		params = river.NewJobListParams()
	}
	res, err := b.ins.JobList(context.Background(), params.Kinds(delivery.KindDeliver).First(10000))
	require.NoError(t, err)
	return res.Jobs
}

// seal "seals" a secret as its associated data and then the plaintext;
// unseal opens it.
func seal(p, ad []byte) ([]byte, error) { return append(append([]byte{}, ad...), p...), nil }

func unseal(sealed, ad []byte) ([]byte, error) { return bytes.TrimPrefix(sealed, ad), nil }

// setup builds the adapter on a fresh database with one owner.
func setup(t *testing.T) *bundle {
	t.Helper()
	pool := testdb.New(t)
	ins, err := riverjob.NewInserter(pool, 0, zap.NewNop())
	require.NoError(t, err)
	rec := events.NewRecorder(isDeclared, nil)
	uow := webhookdb.NewUnitOfWork(pool, func(tx pgx.Tx) domain.Recorder { return rec.With(tx) }, ins)
	store, err := webhookdb.NewStore(pool, ins)
	require.NoError(t, err)
	t.Cleanup(store.Close)
	b := &bundle{pool: pool, ins: ins, rec: rec, store: store}
	b.svc = webhook.NewService(webhook.Deps{
		UnitOfWork: uow,
		Seal:       seal,
	})
	b.owner = b.newOwner(t)
	return b
}

func (b *bundle) newOwner(t *testing.T) uuid.UUID {
	t.Helper()
	id := uuid.New()
	_, err := b.pool.Exec(context.Background(), `INSERT INTO owners (id, email, password_hash, created_at, updated_at)
VALUES ($1, $2, 'x', now(), now())`, id, id.String()+"@example.com")
	require.NoError(t, err)
	return id
}

func (b *bundle) endpoint(t *testing.T, body string) webhook.WithSecret {
	t.Helper()
	var in webhook.CreateInput
	require.NoError(t, json.Unmarshal([]byte(body), &in))
	out, err := b.svc.Create(context.Background(), b.owner, in)
	require.NoError(t, err)
	return out
}

func (b *bundle) event(t *testing.T, typ string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, pgx.BeginFunc(context.Background(), b.pool, func(tx pgx.Tx) error {
		var err error
		id, err = b.rec.With(tx).Record(context.Background(), b.owner, typ, "s", map[string]any{"k": "v"})
		return err
	}))
	return id
}

// chain queues n chain deliveries of new events to the endpoint, in order,
// and returns their job ids.
func (b *bundle) chain(t *testing.T, endpointID uuid.UUID, n int) []int64 {
	t.Helper()
	ids := make([]int64, 0, n)
	for range n {
		res, err := b.store.Enqueue(context.Background(), []delivery.Delivery{{EndpointID: endpointID, EventID: b.event(t, "code.issued"), Chain: true}}, delivery.Summary{})
		require.NoError(t, err)
		ids = append(ids, res[0].JobID)
	}
	return ids
}

// completeAvailable completes the available jobs among ids. River's
// client cannot complete a job it did not run, so the completion is
// written as River's completer would.
func (b *bundle) completeAvailable(t *testing.T, ids []int64) {
	t.Helper()
	_, err := b.pool.Exec(context.Background(), `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = ANY($1) AND state = 'available'`, ids)
	require.NoError(t, err)
}

// counts reads the endpoint's chain counts.
func (b *bundle) counts(t *testing.T, endpointID uuid.UUID) (running, pending int) {
	t.Helper()
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT running, pending FROM webhook_endpoint_queues WHERE endpoint_id = $1`, endpointID).
		Scan(&running, &pending))
	return running, pending
}

func TestEndpointStoreRoundTripsAndScopesByOwner(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.endpoint(t, `{"url":"https://a.example/h","event_types":["code.*","corpus.*"],"headers":{"X-A":"1"},"max_in_flight":3,"description":"a"}`)
	got, err := b.svc.Get(ctx, b.owner, a.ID)
	require.NoError(t, err)
	require.Equal(t, a.View.URL, got.URL)
	require.Equal(t, []string{"code.*", "corpus.*"}, got.EventTypes)
	require.Equal(t, map[string]string{"X-A": webhook.HeaderMask}, got.Headers, "names, values masked")
	require.Equal(t, 3, got.MaxInFlight)

	other := b.newOwner(t)
	_, err = b.svc.Get(ctx, other, a.ID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	require.ErrorIs(t, b.svc.Delete(ctx, other, a.ID), domain.ErrNotFound)
	page, err := b.svc.List(ctx, other, webhook.ListInput{})
	require.NoError(t, err)
	require.Empty(t, page.Data)

	for range 2 {
		b.endpoint(t, `{"url":"https://b.example/h","event_types":["*"]}`)
	}
	page, err = b.svc.List(ctx, b.owner, webhook.ListInput{PageInput: op.PageInput{Limit: 2}})
	require.NoError(t, err)
	require.Len(t, page.Data, 2)
	require.NotEqual(t, a.ID, page.Data[0].ID, "newest first by default")
	require.NotEqual(t, a.ID, page.Data[1].ID, "newest first by default")
	next, err := b.svc.List(ctx, b.owner, webhook.ListInput{PageInput: op.PageInput{Limit: 2, Cursor: *page.NextCursor}})
	require.NoError(t, err)
	require.Len(t, next.Data, 1)
	require.Nil(t, next.NextCursor)

	require.NoError(t, b.svc.Delete(ctx, b.owner, a.ID))
	_, err = webhookdb.PurgeDeletedEndpoints(ctx, b.pool, time.Now().Add(time.Minute))
	require.NoError(t, err)
	var leases int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_endpoint_leases WHERE endpoint_id = $1`, a.ID).Scan(&leases))
	require.Zero(t, leases, "the lease rows go with the purged endpoint")
}

func TestLeaseSlotsAreTakenOnceAndReleasedByTheirHolder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"],"max_in_flight":2}`)
	ev := b.event(t, "code.issued")
	take := func() delivery.Claim {
		t.Helper()
		c, err := b.store.TakeLease(ctx, ep.ID, ev, uuid.New(), time.Minute)
		require.NoError(t, err)
		return c
	}
	c1, c2, c3 := take(), take(), take()
	require.NotNil(t, c1.Lease)
	require.NotNil(t, c2.Lease)
	require.NotEqual(t, c1.Lease.Slot, c2.Lease.Slot)
	require.Nil(t, c3.Lease, "max_in_flight 2: the third waits")
	require.NotNil(t, c3.Event)
	require.Equal(t, "code.issued", c3.Event.Type)
	require.Equal(t, ep.ID, c3.Endpoint.ID)
	require.Equal(t, 2, c3.Endpoint.MaxInFlight)
	require.NotEmpty(t, c3.Endpoint.SecretSealed)

	// The holder's release frees its slot for the next taker.
	_, err := b.store.Finish(ctx, delivery.Finish{Lease: c2.Lease})
	require.NoError(t, err)
	c2 = take()
	require.NotNil(t, c2.Lease, "the released slot is taken again")

	// A release by another token (a holder whose lease expired) frees nothing.
	stale := *c1.Lease
	stale.Token = uuid.New()
	_, err = b.store.Finish(ctx, delivery.Finish{Lease: &stale})
	require.NoError(t, err)
	require.Nil(t, take().Lease)

	_, err = b.store.Finish(ctx, delivery.Finish{Lease: c1.Lease})
	require.NoError(t, err)
	c4 := take()
	require.NotNil(t, c4.Lease)
	require.Equal(t, c1.Lease.Slot, c4.Lease.Slot)

	// A lease whose holder died frees itself when busy_until passes.
	_, err = b.pool.Exec(ctx, `UPDATE webhook_endpoint_leases SET busy_until = now() - interval '1 second' WHERE endpoint_id = $1 AND slot = $2`, ep.ID, c2.Lease.Slot)
	require.NoError(t, err)
	require.NotNil(t, take().Lease)

	// No lease for a pruned event or a disabled endpoint; a deleted one is gone.
	_, err = b.store.Finish(ctx, delivery.Finish{Lease: c4.Lease})
	require.NoError(t, err)
	c, err := b.store.TakeLease(ctx, ep.ID, uuid.New(), uuid.New(), time.Minute)
	require.NoError(t, err)
	require.Nil(t, c.Event)
	require.Nil(t, c.Lease)
	_, err = b.pool.Exec(ctx, `UPDATE webhook_endpoints SET enabled = false WHERE id = $1`, ep.ID)
	require.NoError(t, err)
	c = take()
	require.False(t, c.Endpoint.Enabled)
	require.Nil(t, c.Lease)
	// A deleted endpoint is disabled for good; once purged it is gone.
	require.NoError(t, b.svc.Delete(ctx, b.owner, ep.ID))
	c = take()
	require.False(t, c.Endpoint.Enabled)
	require.Nil(t, c.Lease)
	_, err = webhookdb.PurgeDeletedEndpoints(ctx, b.pool, time.Now().Add(time.Minute))
	require.NoError(t, err)
	_, err = b.store.TakeLease(ctx, ep.ID, ev, uuid.New(), time.Minute)
	require.ErrorIs(t, err, delivery.ErrGone)
}

func TestFinishSettlesTheEndpointsFailureState(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	state := func() (enabled bool, since *time.Time, reason *string) {
		t.Helper()
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT enabled, failing_since, disabled_reason FROM webhook_endpoints WHERE id = $1`, ep.ID).
			Scan(&enabled, &since, &reason))
		return
	}
	fail := func(now time.Time) delivery.Settled {
		t.Helper()
		s, err := b.store.Finish(ctx, delivery.Finish{
			Attempt: &delivery.Attempt{JobID: 1, EndpointID: ep.ID, EventID: uuid.New(), Attempt: 1, Outcome: delivery.OutcomeRetryable,
				StatusCode: 500, Error: "HTTP 500", At: now},
			Settle: delivery.SettleFailure, Now: now, DisableAfter: delivery.DisableAfter, DisableReason: "failing for 5 days",
		})
		require.NoError(t, err)
		return s
	}
	t0 := time.Now().UTC().Truncate(time.Microsecond)
	require.False(t, fail(t0).Disabled)
	_, since, _ := state()
	require.True(t, t0.Equal(*since))
	require.False(t, fail(t0.Add(time.Hour)).Disabled)
	_, since, _ = state()
	require.True(t, t0.Equal(*since), "a later failure keeps the first failure's time")

	_, err := b.store.Finish(ctx, delivery.Finish{Settle: delivery.SettleSuccess, Now: t0.Add(2 * time.Hour),
		Attempt: &delivery.Attempt{JobID: 1, EndpointID: ep.ID, EventID: uuid.New(), Attempt: 2, Outcome: delivery.OutcomeCompleted, StatusCode: 200}})
	require.NoError(t, err)
	_, since, _ = state()
	require.Nil(t, since, "a success clears it")

	require.False(t, fail(t0).Disabled)
	require.True(t, fail(t0.Add(delivery.DisableAfter)).Disabled, "five days of failure disable")
	enabled, since, reason := state()
	require.False(t, enabled)
	require.NotNil(t, since)
	require.Equal(t, "failing for 5 days", *reason)
	require.False(t, fail(t0.Add(delivery.DisableAfter+time.Hour)).Disabled, "disabled once")

	var n int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1`, ep.ID).Scan(&n))
	require.Equal(t, 6, n)
	pruned, err := b.store.PruneAttempts(ctx, t0.Add(30*24*time.Hour))
	require.NoError(t, err)
	require.EqualValues(t, 6, pruned)
}

func TestFinishStoresTheSignatureHeadersSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	const (
		ts  = "1764609600"
		sig = "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1,3x9Qn0bFv2fE1hQ1m3hQd2pSpS0H9b4QXNwv3pVvC8o="
	)
	for _, a := range []delivery.Attempt{
		{JobID: 7, Attempt: 1, Outcome: delivery.OutcomeRetryable, StatusCode: 500, Error: "HTTP 500", Timestamp: ts, Signature: sig},
		{JobID: 7, Attempt: 2, Outcome: delivery.OutcomeDiscarded, Error: "endpoint disabled"},
	} {
		a.EndpointID, a.EventID, a.At = ep.ID, uuid.New(), time.Now()
		_, err := b.store.Finish(ctx, delivery.Finish{Attempt: &a, Now: time.Now()})
		require.NoError(t, err)
	}
	rows, err := b.pool.Query(ctx, `SELECT webhook_timestamp, webhook_signature FROM webhook_attempts WHERE endpoint_id = $1 ORDER BY id`, ep.ID)
	require.NoError(t, err)
	type sent struct{ Timestamp, Signature *string }
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[sent])
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, ts, *got[0].Timestamp)
	require.Equal(t, sig, *got[0].Signature)
	require.Nil(t, got[1].Timestamp, "an attempt that sent nothing stores none")
	require.Nil(t, got[1].Signature)
}

func TestEnqueueIsUniquePerEndpointAndEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	ev := b.event(t, "code.issued")
	later := time.Now().Add(5 * time.Minute)
	first, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: ev, ScheduledAt: later}}, delivery.Summary{})
	require.NoError(t, err)
	require.False(t, first[0].Duplicate)
	again, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: ev}}, delivery.Summary{})
	require.NoError(t, err)
	require.True(t, again[0].Duplicate, "a second fan-out queues nothing new")
	require.Equal(t, first[0].JobID, again[0].JobID)

	j := b.job(t, first[0].JobID)
	require.Equal(t, rivertype.JobStateScheduled, j.State)
	require.Equal(t, delivery.MaxAttempts, j.MaxAttempts)
	require.Equal(t, riverjob.QueueWebhooks, j.Queue)
}

// A delivery that has finished, however it finished, is not queued again by
// a later fan-out of the same event: webhooks.send_test queues its delivery
// itself, and the fan-out of its webhook.test event can run after a 410
// cancelled that delivery.
func TestEnqueueAfterADeliveryFinishedQueuesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	for _, state := range []string{"completed", "cancelled", "discarded", "retryable"} {
		t.Run(state, func(t *testing.T) {
			ev := b.event(t, "code.issued")
			first, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: ev}}, delivery.Summary{})
			require.NoError(t, err)
			if state == "cancelled" {
				_, err = b.ins.JobCancel(ctx, first[0].JobID)
			} else {
				// River's client cannot finish a job it did not run: the
				// finished states are written as River's completer would.
				_, err = b.pool.Exec(ctx, `UPDATE river_job SET state = $2::river_job_state, attempt = 1,
  finalized_at = CASE WHEN $2 = 'retryable' THEN NULL ELSE now() END WHERE id = $1`, first[0].JobID, state)
			}
			require.NoError(t, err)
			again, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: ev}}, delivery.Summary{})
			require.NoError(t, err)
			require.True(t, again[0].Duplicate, "a %s delivery is not queued again", state)
			n := 0
			for _, j := range b.deliveryJobs(t, nil) {
				if deliveryArgs(t, j).EventID == ev {
					n++
				}
			}
			require.Equal(t, 1, n)
		})
	}
}

// Wake makes a snoozed delivery available now, whether River keeps it
// scheduled or, due soon, available ahead of its time, and leaves every
// delivery in another state as it is: one running, finished, or already
// due is never run again by it.
func TestWakeMakesOnlySnoozedDeliveriesAvailable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	cases := []struct {
		name     string
		set      string // how River left the job
		wantWake bool
	}{
		{name: "snoozed, scheduled", set: `state = 'scheduled', scheduled_at = now() + interval '1 minute'`, wantWake: true},
		{name: "snoozed, available ahead of its time", set: `state = 'available', scheduled_at = now() + interval '2 seconds'`, wantWake: true},
		{name: "due", set: `state = 'available', scheduled_at = now() - interval '1 second'`},
		{name: "running", set: `state = 'running', attempt = 1, attempted_at = now(), scheduled_at = now() + interval '1 minute'`},
		{name: "completed", set: `state = 'completed', attempt = 1, finalized_at = now(), scheduled_at = now() + interval '1 minute'`},
		{name: "retrying", set: `state = 'retryable', attempt = 1, scheduled_at = now() + interval '1 minute'`},
	}
	ids := make([]int64, len(cases))
	for i, c := range cases {
		got, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: b.event(t, "code.issued")}}, delivery.Summary{})
		require.NoError(t, err)
		ids[i] = got[0].JobID
		// River's client cannot put a job in these states by itself: they
		// are written as River would leave them.
		_, err = b.pool.Exec(ctx, `UPDATE river_job SET `+c.set+` WHERE id = $1`, ids[i])
		require.NoError(t, err, c.name)
	}
	before := make([]*rivertype.JobRow, len(cases))
	for i := range cases {
		before[i] = b.job(t, ids[i])
	}
	n, err := b.store.Wake(ctx, append(ids, 1<<40))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	for i, c := range cases {
		after := b.job(t, ids[i])
		if c.wantWake {
			require.Equal(t, rivertype.JobStateAvailable, after.State, c.name)
			require.False(t, after.ScheduledAt.After(time.Now()), "%s: due now", c.name)
			continue
		}
		require.Equal(t, before[i].State, after.State, c.name)
		require.Equal(t, before[i].ScheduledAt, after.ScheduledAt, c.name)
	}
	n, err = b.store.Wake(ctx, nil)
	require.NoError(t, err)
	require.Zero(t, n)
}

// An endpoint's chain: deliveries beyond the window wait pending, a
// finishing delivery of the chain reports them, Promote makes the oldest
// available, and the sweep restarts a chain whose deliveries are gone.
func TestChainsHoldDeliveriesBeyondTheWindowPending(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	ids := b.chain(t, ep.ID, delivery.ChainWindow+3)
	states := func() map[string]int {
		t.Helper()
		out := map[string]int{}
		for _, j := range b.deliveryJobs(t, nil) {
			if slices.Contains(ids, j.ID) {
				out[string(j.State)]++
			}
		}
		return out
	}
	require.Equal(t, map[string]int{"available": delivery.ChainWindow, "pending": 3}, states())
	r, p := b.counts(t, ep.ID)
	require.Equal(t, delivery.ChainWindow, r)
	require.Equal(t, 3, p)
	// The chain's mark and the pending one's reason are River tags, which
	// River does not index; the metadata, which it does, stays empty.
	for id, tags := range map[int64][]string{
		ids[0]:                    {riverjob.ChainTag},
		ids[delivery.ChainWindow]: {riverjob.ChainTag, riverjob.ChainFullTag},
	} {
		j := b.job(t, id)
		require.Equal(t, tags, j.Tags)
		require.JSONEq(t, `{}`, string(j.Metadata))
	}

	// A second fan-out of a delivery already in the chain counts nothing.
	ev := deliveryArgs(t, b.job(t, ids[0])).EventID
	dup, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: ev, Chain: true}}, delivery.Summary{})
	require.NoError(t, err)
	require.True(t, dup[0].Duplicate)
	r, _ = b.counts(t, ep.ID)
	require.Equal(t, delivery.ChainWindow, r)

	settled, err := b.store.Finish(ctx, delivery.Finish{EndpointID: ep.ID, Chain: true, Now: time.Now()})
	require.NoError(t, err)
	require.Equal(t, delivery.ChainWindow-1, settled.Running)
	require.True(t, settled.Pending)
	n, err := b.store.Promote(ctx, ep.ID)
	require.NoError(t, err)
	require.Equal(t, 1, n, "up to the window")
	require.Equal(t, rivertype.JobStateAvailable, b.job(t, ids[delivery.ChainWindow]).State, "the oldest pending delivery goes first")
	n, err = b.store.Promote(ctx, ep.ID)
	require.NoError(t, err)
	require.Zero(t, n, "the window is full")

	// The chain's deliveries vanish (their process died and they were
	// finished elsewhere): the sweep restarts what is pending.
	b.completeAvailable(t, ids)
	n, err = b.store.SweepChains(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, map[string]int{"completed": delivery.ChainWindow + 1, "available": 2}, states())
	r, p = b.counts(t, ep.ID)
	require.Equal(t, 2, r)
	require.Zero(t, p)
	n, err = b.store.SweepChains(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing stalled")
}

// Sweeps take turns to list the stalled chains: a sweep that finds another
// listing them restarts nothing, and the turn goes back as the other's
// listing ends.
func TestSweepsTakeTurns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	ids := b.chain(t, ep.ID, delivery.ChainWindow+2)
	b.completeAvailable(t, ids)

	// Another sweep, listing the stalled chains.
	tx, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
			t.Logf("end the other sweep's listing: %v", err)
		}
	})
	var turn bool
	var stalled []uuid.UUID
	require.NoError(t, tx.QueryRow(ctx, webhookdb.SweepTurn).Scan(&turn, &stalled))
	require.True(t, turn)
	require.Equal(t, []uuid.UUID{ep.ID}, stalled)

	n, err := b.store.SweepChains(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "another sweep has the turn")
	require.Equal(t, rivertype.JobStatePending, b.job(t, ids[delivery.ChainWindow]).State)

	// The other sweep's listing ends.
	require.NoError(t, tx.Rollback(ctx))
	n, err = b.store.SweepChains(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = b.store.SweepChains(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing stalled, and the turn was given back")
}

// A promotion whose process died after it took deliveries out of the
// pending count, before it made them available: the chain's count says
// running, River says pending. The sweep finds them by River's state.
func TestSweepRestartsAChainWhosePromotionDied(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	ids := b.chain(t, ep.ID, delivery.ChainWindow+3)
	// The window was delivered, and a promotion took the three pending
	// deliveries into the count, then died.
	b.completeAvailable(t, ids)
	_, err := b.pool.Exec(ctx, `UPDATE webhook_endpoint_queues SET running = 3, pending = 0 WHERE endpoint_id = $1`, ep.ID)
	require.NoError(t, err)

	n, err := b.store.SweepChains(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	for _, id := range ids[delivery.ChainWindow:] {
		require.Equal(t, rivertype.JobStateAvailable, b.job(t, id).State)
	}
	running, pending := b.counts(t, ep.ID)
	require.Equal(t, 3, running)
	require.Zero(t, pending)
}

func TestPromotionsWaitTheirTurn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	for range delivery.ChainWindow + 1 {
		_, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: b.event(t, "code.issued"), Chain: true}}, delivery.Summary{})
		require.NoError(t, err)
	}
	_, err := b.store.Finish(ctx, delivery.Finish{EndpointID: ep.ID, Chain: true, Now: time.Now()})
	require.NoError(t, err)

	release := b.store.HoldPromotions()
	waiting, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = b.store.Promote(waiting, ep.ID)
	require.ErrorIs(t, err, context.DeadlineExceeded, "every turn is taken: the promotion waits, and gives up with its context")
	var pending int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT pending FROM webhook_endpoint_queues WHERE endpoint_id = $1`, ep.ID).Scan(&pending))
	require.Equal(t, 1, pending, "a promotion that did not get its turn changed nothing")

	done := make(chan error, 1)
	var n int
	go func() {
		var err error
		n, err = b.store.Promote(ctx, ep.ID)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("promoted without a turn: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	require.NoError(t, <-done)
	require.Equal(t, 1, n, "once a turn is free, it promotes")
}

// A promotion reads an endpoint's oldest pending deliveries through
// standmeet_webhook_pending_idx, once, even when River's statistics were
// taken before anything went pending: the planner then takes River's
// fetching index for the cheaper, and reads every pending job of every
// endpoint. River's calls that follow in the same transaction are planned
// with the settings they always get.
func TestPromotionReadsPendingDeliveriesThroughTheirIndex(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	b.chain(t, ep.ID, delivery.ChainWindow)
	// Statistics as an autovacuum takes them before a backlog: no pending
	// job. Too few rows change after it for another to be due.
	_, err := b.pool.Exec(ctx, `ANALYZE river_job`)
	require.NoError(t, err)
	b.chain(t, ep.ID, 3)
	_, pending := b.counts(t, ep.ID)
	require.Equal(t, 3, pending)

	plan, sortAfter, err := b.store.TakePlan(ctx, ep.ID)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(plan, "standmeet_webhook_pending_idx"), "read once, through its index:\n%s", plan)
	require.NotContains(t, plan, "Index Cond: (state = 'pending'", "not through River's fetching index:\n%s", plan)
	require.Equal(t, "on", sortAfter, "River's calls after the take plan as ever")
}

// The sweep's listing reads what waits and what is live, whatever River's
// statistics say: taken before the first delivery, they make River's kind
// index look like the cheapest way to every delivery there has been.
func TestSweepReadsOnlyWhatWaitsAndWhatIsLive(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	// Statistics of a River table holding other jobs, and no delivery.
	others := make([]river.InsertManyParams, 200)
	for i := range others {
		others[i] = river.InsertManyParams{Args: riverjob.WebhookPruneArgs{Retention: time.Duration(i + 1)}}
	}
	_, err := b.ins.InsertMany(ctx, others)
	require.NoError(t, err)
	_, err = b.pool.Exec(ctx, `ANALYZE river_job`)
	require.NoError(t, err)

	busy := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	b.chain(t, busy.ID, delivery.ChainWindow+3)
	stalled := b.endpoint(t, `{"url":"https://b.example/h","event_types":["*"]}`)
	ids := b.chain(t, stalled.ID, delivery.ChainWindow+2)
	b.completeAvailable(t, ids)

	plan, err := b.store.SweepPlan(ctx)
	require.NoError(t, err)
	require.Contains(t, plan, "standmeet_webhook_pending_idx", "pending deliveries through their index:\n%s", plan)
	require.NotContains(t, plan, "river_job_kind", "not every delivery through River's kind index:\n%s", plan)
	require.NotContains(t, plan, "Seq Scan on river_job", "not River's whole table:\n%s", plan)
	require.Contains(t, plan, "hashed SubPlan", "the live chains read once, into a hashed set:\n%s", plan)
	require.NotContains(t, plan, "JIT", "a listing this small is not compiled:\n%s", plan)

	var turn bool
	var listed []uuid.UUID
	require.NoError(t, b.pool.QueryRow(ctx, webhookdb.SweepTurn).Scan(&turn, &listed))
	require.True(t, turn)
	require.Equal(t, []uuid.UUID{stalled.ID}, listed, "the busy chain is not listed")

	n, err := b.store.SweepChains(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n, "the stalled chain is restarted, the busy one left alone")
	_, pending := b.counts(t, busy.ID)
	require.Equal(t, 3, pending)
}

// A promotion makes its deliveries available a chunk per transaction, each
// chunk visible to River once it commits, while it holds the chain lock.
// The first chunk commits with the take, so failing there takes nothing;
// cut short later, it gives back what it did not make available. Either
// way it frees the lock.
func TestPromotionMakesDeliveriesAvailableChunkByChunk(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	chunk := webhookdb.PromoteChunk
	ids := b.chain(t, ep.ID, delivery.ChainWindow+chunk+2)
	for range chunk + 2 {
		_, err := b.store.Finish(ctx, delivery.Finish{EndpointID: ep.ID, Chain: true, Now: time.Now()})
		require.NoError(t, err)
	}
	waiting := ids[delivery.ChainWindow:]

	// A first chunk that fails takes nothing: it shares its transaction
	// with the take.
	cut := errors.New("cut short")
	b.store.OnPromote(func(i int) error {
		if i == 1 {
			return cut
		}
		return nil
	})
	n, err := b.store.Promote(ctx, ep.ID)
	require.ErrorIs(t, err, cut)
	require.Zero(t, n)
	r, p := b.counts(t, ep.ID)
	require.Equal(t, delivery.ChainWindow-chunk-2, r)
	require.Equal(t, chunk+2, p)
	for _, id := range waiting {
		require.Equal(t, rivertype.JobStatePending, b.job(t, id).State)
	}

	var seen []rivertype.JobState
	var locked bool
	b.store.OnPromote(func(i int) error {
		switch i {
		case chunk:
			for _, id := range []int64{waiting[0], waiting[chunk-1], waiting[chunk]} {
				seen = append(seen, b.job(t, id).State)
			}
			var free bool
			require.NoError(t, b.pool.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(1330013, hashtext($1::text))`, ep.ID).Scan(&free))
			locked = !free
		case chunk + 1:
			return cut
		}
		return nil
	})
	n, err = b.store.Promote(ctx, ep.ID)
	require.ErrorIs(t, err, cut)
	require.Equal(t, chunk, n, "the first chunk was made available, the second rolled back")
	require.Equal(t, []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateAvailable, rivertype.JobStatePending}, seen,
		"the first chunk is committed available before the second is made available")
	require.True(t, locked, "the chain lock is held while the promotion runs")
	require.Equal(t, rivertype.JobStatePending, b.job(t, waiting[chunk]).State)
	r, p = b.counts(t, ep.ID)
	require.Equal(t, delivery.ChainWindow-2, r, "what it did not make available is given back")
	require.Equal(t, 2, p)

	// A caller that gives up once the deliveries are taken does not cut the
	// promotion short.
	gone, cancel := context.WithCancel(ctx)
	defer cancel()
	b.store.OnPromote(func(int) error { cancel(); return nil })
	n, err = b.store.Promote(gone, ep.ID)
	require.NoError(t, err, "the lock was freed")
	require.Equal(t, 2, n)
	for _, id := range waiting {
		require.Equal(t, rivertype.JobStateAvailable, b.job(t, id).State)
	}
	r, p = b.counts(t, ep.ID)
	require.Equal(t, delivery.ChainWindow, r)
	require.Zero(t, p)
}

func TestDeliveryLogAndRedeliver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	evs := []uuid.UUID{b.event(t, "code.issued"), b.event(t, "code.revoked"), b.event(t, "code.redeemed")}
	var jobs []int64
	for _, ev := range evs {
		res, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: ev}}, delivery.Summary{})
		require.NoError(t, err)
		jobs = append(jobs, res[0].JobID)
	}
	// One discarded after its attempts, one cancelled at once (a 410), one
	// completed. River's client cancels; it cannot discard or complete a
	// job it did not run, so those are written as River's completer would.
	_, err := b.pool.Exec(ctx, `UPDATE river_job SET state = 'discarded', attempt = max_attempts, finalized_at = now(),
  errors = ARRAY['{"error":"HTTP 500","attempt":18}'::jsonb] WHERE id = $1`, jobs[0])
	require.NoError(t, err)
	_, err = b.ins.JobCancel(ctx, jobs[1])
	require.NoError(t, err)
	_, err = b.pool.Exec(ctx, `UPDATE river_job SET state = 'completed', attempt = 1, finalized_at = now() WHERE id = $1`, jobs[2])
	require.NoError(t, err)
	_, err = b.store.Finish(ctx, delivery.Finish{Attempt: &delivery.Attempt{JobID: jobs[1], EndpointID: ep.ID, EventID: evs[1],
		Attempt: 1, Outcome: delivery.OutcomeDiscarded, StatusCode: 410, Latency: 12 * time.Millisecond, Response: "gone", Error: "HTTP 410", At: time.Now()}})
	require.NoError(t, err)

	page, err := b.svc.Deliveries(ctx, b.owner, webhook.DeliveriesInput{ID: ep.ID})
	require.NoError(t, err)
	require.Len(t, page.Data, 3)
	byJob := map[int64]webhook.Delivery{}
	for _, d := range page.Data {
		byJob[d.JobID] = d
	}
	require.Equal(t, "discarded", byJob[jobs[0]].State)
	require.Equal(t, "HTTP 500", *byJob[jobs[0]].LastError)
	require.Equal(t, "code.issued", byJob[jobs[0]].EventType)
	require.Equal(t, 410, *byJob[jobs[1]].StatusCode)
	require.Equal(t, 12, *byJob[jobs[1]].LatencyMS)
	require.Equal(t, "gone", *byJob[jobs[1]].Response)
	require.Equal(t, "/admin/tasks?job=", byJob[jobs[2]].TaskURL[:len("/admin/tasks?job=")])

	out, err := b.svc.Redeliver(ctx, b.owner, ep.ID)
	require.NoError(t, err)
	require.Equal(t, 2, out.Count)
	j := b.job(t, jobs[0])
	require.Equal(t, rivertype.JobStateAvailable, j.State)
	require.Equal(t, delivery.MaxAttempts+1, j.MaxAttempts, "an exhausted delivery gets one more attempt")
	require.Equal(t, rivertype.JobStateCompleted, b.job(t, jobs[2]).State, "a delivered event is not delivered again")
	out, err = b.svc.Redeliver(ctx, b.owner, ep.ID)
	require.NoError(t, err)
	require.Zero(t, out.Count, "nothing discarded is left")

	// A discarded job whose (endpoint, event) has a live sibling is left
	// alone. Jobs are unique in every state now, so only a job queued
	// before that (with River's default unique states, which leave out
	// cancelled and discarded) can have a sibling: the UPDATE makes
	// jobs[1] one; River's client has no way to write an old job's
	// unique states.
	_, err = b.pool.Exec(ctx, `UPDATE river_job SET state = 'cancelled', finalized_at = now(),
  unique_states = B'11110101' WHERE id = $1`, jobs[1])
	require.NoError(t, err)
	_, err = b.ins.Insert(ctx, riverjob.WebhookDeliverArgs{EndpointID: ep.ID, EventID: evs[1]}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	out, err = b.svc.Redeliver(ctx, b.owner, ep.ID)
	require.NoError(t, err)
	require.Zero(t, out.Count)
}

func TestSendTestRecordsTheEventAndQueuesItsJobInOneTransaction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["code.*"]}`)
	out, err := b.svc.SendTest(ctx, b.owner, ep.ID)
	require.NoError(t, err)
	var (
		typ  string
		data []byte
	)
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT type, data FROM events WHERE id = $1`, out.EventID).Scan(&typ, &data))
	require.Equal(t, domain.EventWebhookTest, typ)
	require.JSONEq(t, `{"endpoint_id":"`+ep.ID.String()+`","test":true}`, string(data))
	require.JSONEq(t, `{"endpoint_id":"`+ep.ID.String()+`","event_id":"`+out.EventID.String()+`"}`, string(b.job(t, out.JobID).EncodedArgs))
}

// Fan-outs running at once keep an endpoint's chain to its window exactly:
// each is counted in before its transaction, not under a lock held across
// its insert.
func TestConcurrentFanoutsKeepTheChainWindowExact(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	const writers, each = 8, 20
	evs := make([][]uuid.UUID, writers)
	for w := range evs {
		for range each {
			evs[w] = append(evs[w], b.event(t, "code.issued"))
		}
	}
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for _, ev := range evs[w] {
				if _, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: ev, Chain: true}}, delivery.Summary{}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		require.NoError(t, <-errs)
	}
	states := map[rivertype.JobState]int{}
	for _, j := range b.deliveryJobs(t, nil) {
		states[j.State]++
	}
	require.Equal(t, map[rivertype.JobState]int{rivertype.JobStateAvailable: delivery.ChainWindow,
		rivertype.JobStatePending: writers*each - delivery.ChainWindow}, states)
	var running, pending int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT running, pending FROM webhook_endpoint_queues WHERE endpoint_id = $1`, ep.ID).
		Scan(&running, &pending))
	require.Equal(t, delivery.ChainWindow, running)
	require.Equal(t, writers*each-delivery.ChainWindow, pending)
}

// Runs that finish together share statements, and each is counted out of
// its chain as one statement of its own would count it: every count from
// the window down is seen once (so exactly one run sees the chain cross
// the refill mark), every attempt is recorded, and fan-outs counting into
// a chain meanwhile neither deadlock with them nor lose a count.
func TestRunsFinishingTogetherCountOutAsOneByOne(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	other := b.endpoint(t, `{"url":"https://b.example/h","event_types":["*"]}`)
	var evs []uuid.UUID
	for range delivery.ChainWindow {
		ev := b.event(t, "code.issued")
		evs = append(evs, ev)
		_, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: ev, Chain: true},
			{EndpointID: other.ID, EventID: ev, Chain: true}}, delivery.Summary{})
		require.NoError(t, err)
	}
	const runs = 64
	seen := make(chan int, 2*runs)
	errs := make(chan error, 2*runs+8)
	for i := range runs {
		for _, e := range []uuid.UUID{ep.ID, other.ID} {
			go func() {
				s, err := b.store.Finish(ctx, delivery.Finish{EndpointID: e, Chain: true, Now: time.Now(),
					Attempt: &delivery.Attempt{JobID: int64(i + 1), EndpointID: e, EventID: evs[i], Attempt: 1,
						Outcome: delivery.OutcomeCompleted, StatusCode: 200, At: time.Now()}})
				if e == ep.ID {
					seen <- s.Running
				}
				errs <- err
			}()
		}
	}
	for range 8 {
		go func() {
			_, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: other.ID, EventID: b.event(t, "code.issued"), Chain: true}},
				delivery.Summary{})
			errs <- err
		}()
	}
	for range 2*runs + 8 {
		require.NoError(t, <-errs)
	}
	close(seen)
	var got []int
	for r := range seen {
		got = append(got, r)
	}
	slices.Sort(got)
	var want []int
	for r := delivery.ChainWindow - runs; r < delivery.ChainWindow; r++ {
		want = append(want, r)
	}
	require.Equal(t, want, got, "each count from the window down once")
	var attempts int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1`, ep.ID).Scan(&attempts))
	require.Equal(t, runs, attempts)
	queue := func(e uuid.UUID) (running, pending int) {
		t.Helper()
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT running, pending FROM webhook_endpoint_queues WHERE endpoint_id = $1`, e).
			Scan(&running, &pending))
		return
	}
	running, pending := queue(ep.ID)
	require.Equal(t, delivery.ChainWindow-runs, running)
	require.Zero(t, pending)
	running, pending = queue(other.ID)
	require.Equal(t, delivery.ChainWindow-runs+8, running+pending, "the fan-outs' counts and the runs' all kept")
}

// Takes that arrive together share statements and still never give one
// slot twice: of three takers per endpoint, exactly one gets its lease,
// and the others read the endpoint and the event.
func TestTakesTogetherGiveEachSlotOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	const endpoints, takers = 12, 3
	type result struct {
		ep  uuid.UUID
		c   delivery.Claim
		err error
	}
	out := make(chan result, endpoints*takers)
	var eps []uuid.UUID
	for range endpoints {
		eps = append(eps, b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`).ID)
	}
	ev := b.event(t, "code.issued")
	for _, e := range eps {
		for range takers {
			go func() {
				c, err := b.store.TakeLease(ctx, e, ev, uuid.New(), time.Minute)
				out <- result{e, c, err}
			}()
		}
	}
	held := map[uuid.UUID]int{}
	for range endpoints * takers {
		r := <-out
		require.NoError(t, r.err)
		require.Equal(t, r.ep, r.c.Endpoint.ID)
		require.NotNil(t, r.c.Event)
		require.Equal(t, ev, r.c.Event.ID)
		if r.c.Lease != nil {
			held[r.ep]++
		}
	}
	for _, e := range eps {
		require.Equal(t, 1, held[e], "one lease per endpoint of max_in_flight 1")
	}
}

// The take and the finishing statement run on the store's own pool: closed,
// they fail, while the pool the store was given still serves.
func TestTakeAndFinishRunOnTheStoresOwnPool(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	_, err := b.store.Finish(ctx, delivery.Finish{EndpointID: ep.ID, Settle: delivery.SettleSuccess, Now: time.Now()})
	require.NoError(t, err)
	b.store.Close()
	_, err = b.store.Finish(ctx, delivery.Finish{EndpointID: ep.ID, Settle: delivery.SettleSuccess, Now: time.Now()})
	require.Error(t, err)
	require.NoError(t, b.pool.Ping(ctx))
}
