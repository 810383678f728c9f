package webhookdb_test

import (
	"bytes"
	"context"
	"encoding/json"
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

// states counts the delivery jobs by River state.
func (b *bundle) states(t *testing.T) map[rivertype.JobState]int {
	t.Helper()
	out := map[rivertype.JobState]int{}
	for _, j := range b.deliveryJobs(t, nil) {
		out[j.State]++
	}
	return out
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
// due is never run again by it. It names the running ones.
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
	n, running, err := b.store.Wake(ctx, append(ids, 1<<40))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, []int64{ids[3]}, running, "the running one")
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
	n, running, err = b.store.Wake(ctx, nil)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Empty(t, running)
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

// Every delivery a fan-out queues goes in available, however many one
// endpoint gets and however many fan-outs queue to it at once: nothing
// holds an endpoint's deliveries back in River's pending state.
func TestEnqueueQueuesEveryDeliveryAvailable(t *testing.T) {
	t.Parallel()
	const events = 304
	for _, tc := range []struct {
		name    string
		writers int
	}{{"one fan-out at a time", 1}, {"eight fan-outs at once", 8}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			ctx := context.Background()
			ep := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
			evs := make([]uuid.UUID, events)
			for i := range evs {
				evs[i] = b.event(t, "code.issued")
			}
			errs := make(chan error, tc.writers)
			for w := range tc.writers {
				go func() {
					for i := w; i < events; i += tc.writers {
						if _, err := b.store.Enqueue(ctx, []delivery.Delivery{{EndpointID: ep.ID, EventID: evs[i]}}, delivery.Summary{}); err != nil {
							errs <- err
							return
						}
					}
					errs <- nil
				}()
			}
			for range tc.writers {
				require.NoError(t, <-errs)
			}
			require.Equal(t, map[rivertype.JobState]int{rivertype.JobStateAvailable: events}, b.states(t))
		})
	}
}

// ReleasePending makes available every delivery an earlier version left in
// River's pending state, over more than one page of its listing, and
// returns how many; it leaves another kind's pending job and a scheduled
// delivery as they are, and a second call finds nothing.
func TestReleasePendingMakesPendingDeliveriesAvailable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	const left = 1003 // more than the 1000 ReleasePending lists at a time
	params := make([]river.InsertManyParams, left)
	for i := range params {
		params[i] = river.InsertManyParams{Args: riverjob.WebhookDeliverArgs{EndpointID: uuid.New(), EventID: uuid.New()},
			InsertOpts: &river.InsertOpts{Pending: true}}
	}
	_, err := b.ins.InsertMany(ctx, params)
	require.NoError(t, err)
	other, err := b.ins.Insert(ctx, riverjob.WebhookPruneArgs{Retention: time.Hour}, &river.InsertOpts{Pending: true})
	require.NoError(t, err)
	_, err = b.ins.Insert(ctx, riverjob.WebhookDeliverArgs{EndpointID: uuid.New(), EventID: uuid.New()},
		&river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	require.Equal(t, map[rivertype.JobState]int{rivertype.JobStatePending: left, rivertype.JobStateScheduled: 1}, b.states(t))

	n, err := b.store.ReleasePending(ctx)
	require.NoError(t, err)
	require.Equal(t, left, n)
	require.Equal(t, map[rivertype.JobState]int{rivertype.JobStateAvailable: left, rivertype.JobStateScheduled: 1}, b.states(t))
	require.Equal(t, rivertype.JobStatePending, b.job(t, other.Job.ID).State, "another kind's pending job is not a delivery")

	n, err = b.store.ReleasePending(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing is left pending")
}

// Runs that finish together share statements, and each gets its own
// result: of the failures settled at once, exactly those of the endpoints
// failing for DisableAfter report that they disabled theirs, every attempt
// is recorded, and fan-outs queueing meanwhile do not deadlock with them.
func TestRunsFinishingTogetherGetTheirOwnResults(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	const endpoints, runs, fanouts = 16, 5, 8
	now := time.Now()
	var eps []uuid.UUID
	sick := map[uuid.UUID]bool{}
	for i := range endpoints {
		id := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`).ID
		eps = append(eps, id)
		if i%2 == 0 {
			sick[id] = true
			_, err := b.pool.Exec(ctx, `UPDATE webhook_endpoints SET failing_since = $2, failed_at = $2 WHERE id = $1`,
				id, now.Add(-delivery.DisableAfter-time.Hour))
			require.NoError(t, err)
		}
	}
	ev := b.event(t, "code.issued")
	var queued [][]delivery.Delivery
	for range fanouts {
		e := b.event(t, "code.issued")
		var ds []delivery.Delivery
		for _, ep := range eps {
			ds = append(ds, delivery.Delivery{EndpointID: ep, EventID: e})
		}
		queued = append(queued, ds)
	}

	type result struct {
		ep      uuid.UUID
		settles bool
		s       delivery.Settled
		err     error
	}
	out := make(chan result, endpoints*runs)
	for _, e := range eps {
		// The first run of each endpoint settles it; the others only
		// record their attempts.
		for k := range runs {
			go func() {
				f := delivery.Finish{EndpointID: e, Now: now, Attempt: &delivery.Attempt{JobID: int64(k + 1), EndpointID: e, EventID: ev,
					Attempt: 1, Outcome: delivery.OutcomeRetryable, StatusCode: 500, Error: "HTTP 500", At: now}}
				if k == 0 {
					f.Settle, f.DisableAfter, f.DisableReason = delivery.SettleFailure, delivery.DisableAfter, "failing for 5 days"
				}
				s, err := b.store.Finish(ctx, f)
				out <- result{ep: e, settles: k == 0, s: s, err: err}
			}()
		}
	}
	errs := make(chan error, fanouts)
	for _, ds := range queued {
		go func() {
			_, err := b.store.Enqueue(ctx, ds, delivery.Summary{})
			errs <- err
		}()
	}
	for range endpoints * runs {
		r := <-out
		require.NoError(t, r.err)
		require.Equal(t, r.settles && sick[r.ep], r.s.Disabled, "endpoint %s (sick %t), settling run %t", r.ep, sick[r.ep], r.settles)
	}
	for range fanouts {
		require.NoError(t, <-errs)
	}

	rows, err := b.pool.Query(ctx, `SELECT e.id, e.enabled, (SELECT count(*) FROM webhook_attempts a WHERE a.endpoint_id = e.id)
FROM webhook_endpoints e WHERE e.id = ANY($1)`, eps)
	require.NoError(t, err)
	var (
		id       uuid.UUID
		enabled  bool
		attempts int
	)
	seen := 0
	_, err = pgx.ForEachRow(rows, []any{&id, &enabled, &attempts}, func() error {
		seen++
		require.Equal(t, !sick[id], enabled, "endpoint %s", id)
		require.Equal(t, runs, attempts, "every attempt of endpoint %s is recorded", id)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, endpoints, seen)
	require.Equal(t, map[rivertype.JobState]int{rivertype.JobStateAvailable: endpoints * fanouts}, b.states(t))
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
