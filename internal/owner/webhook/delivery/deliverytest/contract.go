package deliverytest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// Harness is one implementation of delivery.DeliverStore, with what the
// contract needs to set it up and observe it.
type Harness struct {
	Store  delivery.DeliverStore
	Fanout delivery.FanoutStore
	// NewOwner returns an owner id rows may reference.
	NewOwner func(t *testing.T) uuid.UUID
	// NewEndpoint stores an enabled, not failing endpoint of owner that may
	// use maxInFlight slots and returns its id.
	NewEndpoint func(t *testing.T, owner uuid.UUID, maxInFlight int) uuid.UUID
	// DeleteEndpoint deletes the endpoint as its owner does.
	DeleteEndpoint func(t *testing.T, id uuid.UUID)
	// NewEvent records an event of the endpoint's owner and returns its id.
	NewEvent func(t *testing.T, endpointID uuid.UUID) uuid.UUID
	// Attempts returns the attempts Finish recorded for the endpoint,
	// oldest first.
	Attempts func(t *testing.T, endpointID uuid.UUID) []delivery.Attempt
}

// RunContract runs the stores' contract — the lease, Finish's record and
// settlement, reading a recorded outcome back, and the
// fan-out's reads and Enqueue's uniqueness — on fresh implementations from
// newHarness. Memory and the PostgreSQL adapter both pass it. Cooldown
// scheduling and where a fan-out summary is kept are not part of it.
func RunContract(t *testing.T, newHarness func(t *testing.T) Harness) {
	for _, c := range contractCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

// t0 has microseconds only, as PostgreSQL keeps them.
var t0 = time.Now().UTC().Truncate(time.Second)

func take(t *testing.T, h Harness, ep, ev uuid.UUID, ttl time.Duration) (delivery.Claim, uuid.UUID) {
	t.Helper()
	token := uuid.New()
	c, err := h.Store.TakeLease(context.Background(), ep, ev, token, ttl)
	require.NoError(t, err)
	return c, token
}

func finish(t *testing.T, h Harness, f delivery.Finish) delivery.Settled {
	t.Helper()
	s, err := h.Store.Finish(context.Background(), f)
	require.NoError(t, err)
	return s
}

func failure(ep uuid.UUID, now time.Time) delivery.Finish {
	return delivery.Finish{EndpointID: ep, Settle: delivery.SettleFailure, Now: now, DisableAfter: delivery.DisableAfter, DisableReason: "failing"}
}

var contractCases = []struct {
	name string
	run  func(t *testing.T, h Harness)
}{
	{"a rate limit lets a burst start at once, then one start per interval", func(t *testing.T, h Harness) {
		ctx := context.Background()
		ep := h.NewEndpoint(t, h.NewOwner(t), 1)
		for i := range 2 {
			wait, ok, err := h.Store.ReserveRate(ctx, ep, 5, 2, time.Second)
			require.NoError(t, err)
			require.True(t, ok, "start %d of the burst", i)
			require.Less(t, wait, 50*time.Millisecond, "start %d of the burst waits nothing", i)
		}
		wait, ok, err := h.Store.ReserveRate(ctx, ep, 5, 2, time.Second)
		require.NoError(t, err)
		require.True(t, ok)
		require.InDelta(t, 200*time.Millisecond, wait, float64(100*time.Millisecond), "past the burst, one start per 200 ms")
		wait, ok, err = h.Store.ReserveRate(ctx, ep, 5, 2, 100*time.Millisecond)
		require.NoError(t, err)
		require.False(t, ok, "a wait beyond maxWait reserves nothing")
		require.InDelta(t, 400*time.Millisecond, wait, float64(100*time.Millisecond))
		wait, ok, err = h.Store.ReserveRate(ctx, ep, 5, 2, time.Second)
		require.NoError(t, err)
		require.True(t, ok)
		require.InDelta(t, 400*time.Millisecond, wait, float64(100*time.Millisecond), "the refused start took no place")
		other := h.NewEndpoint(t, h.NewOwner(t), 1)
		wait, ok, err = h.Store.ReserveRate(ctx, other, 5, 2, 0)
		require.NoError(t, err)
		require.True(t, ok, "each endpoint has its own limit")
		require.Less(t, wait, 50*time.Millisecond)
	}},
	{"at most max_in_flight holders, each on its own slot", func(t *testing.T, h Harness) {
		ep := h.NewEndpoint(t, h.NewOwner(t), 3)
		ev := h.NewEvent(t, ep)
		slots := map[int]bool{}
		for i := range 5 {
			c, token := take(t, h, ep, ev, time.Minute)
			require.Equal(t, ep, c.Endpoint.ID)
			require.Equal(t, 3, c.Endpoint.MaxInFlight)
			require.True(t, c.Endpoint.Enabled)
			require.NotNil(t, c.Event, "the event is read whether or not a slot is free")
			require.Equal(t, ev, c.Event.ID)
			if i >= 3 {
				require.Nil(t, c.Lease, "every slot is busy")
				continue
			}
			require.NotNil(t, c.Lease)
			require.Equal(t, delivery.Lease{EndpointID: ep, Slot: c.Lease.Slot, Token: token}, *c.Lease)
			require.GreaterOrEqual(t, c.Lease.Slot, 0)
			require.Less(t, c.Lease.Slot, 3)
			require.False(t, slots[c.Lease.Slot], "one holder per slot")
			slots[c.Lease.Slot] = true
		}
	}},
	{"finish releases a slot for its holder only", func(t *testing.T, h Harness) {
		ep := h.NewEndpoint(t, h.NewOwner(t), 1)
		ev := h.NewEvent(t, ep)
		a, _ := take(t, h, ep, ev, time.Minute)
		require.NotNil(t, a.Lease)
		wrong := *a.Lease
		wrong.Token = uuid.New()
		finish(t, h, delivery.Finish{EndpointID: ep, Lease: &wrong, Now: t0})
		c, _ := take(t, h, ep, ev, time.Minute)
		require.Nil(t, c.Lease, "another token does not release the slot")
		finish(t, h, delivery.Finish{EndpointID: ep, Lease: a.Lease, Now: t0})
		c, _ = take(t, h, ep, ev, time.Minute)
		require.NotNil(t, c.Lease, "the holder's release frees it")
		require.Empty(t, h.Attempts(t, ep), "a release without an attempt records none")
	}},
	{"an expired slot is taken again; its old holder does not release it", func(t *testing.T, h Harness) {
		ep := h.NewEndpoint(t, h.NewOwner(t), 1)
		ev := h.NewEvent(t, ep)
		a, _ := take(t, h, ep, ev, 200*time.Millisecond)
		require.NotNil(t, a.Lease)
		c, _ := take(t, h, ep, ev, time.Minute)
		require.Nil(t, c.Lease)
		time.Sleep(400 * time.Millisecond)
		b, _ := take(t, h, ep, ev, time.Minute)
		require.NotNil(t, b.Lease, "the dead holder's slot expired")
		finish(t, h, delivery.Finish{EndpointID: ep, Lease: a.Lease, Now: t0})
		c, _ = take(t, h, ep, ev, time.Minute)
		require.Nil(t, c.Lease, "the old holder's release left its successor's slot alone")
	}},
	{"no lease without an enabled endpoint and its event; a missing endpoint is gone", func(t *testing.T, h Harness) {
		ctx := context.Background()
		_, err := h.Store.TakeLease(ctx, uuid.New(), uuid.New(), uuid.New(), time.Minute)
		require.ErrorIs(t, err, delivery.ErrGone)

		ep := h.NewEndpoint(t, h.NewOwner(t), 2)
		c, _ := take(t, h, ep, uuid.New(), time.Minute)
		require.Equal(t, ep, c.Endpoint.ID)
		require.Nil(t, c.Event, "the event is gone")
		require.Nil(t, c.Lease)

		ev := h.NewEvent(t, ep)
		held, _ := take(t, h, ep, ev, time.Minute)
		require.NotNil(t, held.Lease)
		finish(t, h, failure(ep, t0))
		require.True(t, finish(t, h, failure(ep, t0.Add(delivery.DisableAfter))).Disabled)
		c, _ = take(t, h, ep, ev, time.Minute)
		require.False(t, c.Endpoint.Enabled)
		require.NotNil(t, c.Event)
		require.Nil(t, c.Lease, "a disabled endpoint lends no slot")
	}},
	{"finish records the attempt as given", func(t *testing.T, h Harness) {
		ep := h.NewEndpoint(t, h.NewOwner(t), 1)
		ev := h.NewEvent(t, ep)
		first := delivery.Attempt{JobID: 42, EndpointID: ep, EventID: ev, Attempt: 1, Outcome: delivery.OutcomeRetryable,
			StatusCode: 500, Latency: 12 * time.Millisecond, Response: "oops", Error: "HTTP 500", Location: "",
			Timestamp: "1790510400", Signature: "v1,abc= v1,def=", At: t0}
		second := delivery.Attempt{JobID: 42, EndpointID: ep, EventID: ev, Attempt: 2, Outcome: delivery.OutcomeDiscarded,
			StatusCode: 302, Location: "https://x.example/", Error: "HTTP 302", At: t0.Add(time.Second)}
		finish(t, h, delivery.Finish{EndpointID: ep, Attempt: &first, Now: t0})
		finish(t, h, delivery.Finish{EndpointID: ep, Now: t0})
		finish(t, h, delivery.Finish{EndpointID: ep, Attempt: &second, Now: t0})
		got := h.Attempts(t, ep)
		require.Len(t, got, 2, "a finish without an attempt records none")
		for i, want := range []delivery.Attempt{first, second} {
			require.True(t, want.At.Equal(got[i].At), "attempt %d's time", i+1)
			got[i].At = want.At
			require.Equal(t, want, got[i])
		}
	}},
	{"finish settles the endpoint's failure state", func(t *testing.T, h Harness) {
		ep := h.NewEndpoint(t, h.NewOwner(t), 1)
		ev := h.NewEvent(t, ep)
		state := func() delivery.Endpoint {
			c, _ := take(t, h, ep, ev, time.Minute)
			if c.Lease != nil {
				finish(t, h, delivery.Finish{EndpointID: ep, Lease: c.Lease, Now: t0})
			}
			return c.Endpoint
		}
		require.Nil(t, state().FailingSince)
		require.False(t, finish(t, h, failure(ep, t0)).Disabled)
		got := state()
		require.True(t, t0.Equal(*got.FailingSince))
		require.True(t, t0.Equal(*got.FailedAt), "the first failure is the latest")
		second := t0.Add(delivery.CooldownAfter / 2)
		require.False(t, finish(t, h, failure(ep, second)).Disabled)
		got = state()
		require.True(t, t0.Equal(*got.FailingSince), "a later failure keeps the first one's time")
		require.True(t, second.Equal(*got.FailedAt), "and is the latest")
		third := t0.Add(delivery.CooldownAfter)
		require.False(t, finish(t, h, failure(ep, third)).Disabled)
		require.False(t, finish(t, h, failure(ep, t0.Add(time.Hour))).Disabled)
		got = state()
		require.True(t, t0.Equal(*got.FailingSince))
		require.True(t, third.Equal(*got.FailedAt), "the latest failure is kept once one is CooldownAfter into the streak")
		within := failure(ep, third.Add(time.Minute))
		within.Cooldown = 2 * time.Minute
		finish(t, h, within)
		require.True(t, third.Equal(*state().FailedAt), "a failure within a cooldown of it leaves it")
		rearm := failure(ep, third.Add(2*time.Minute))
		rearm.Cooldown = 2 * time.Minute
		finish(t, h, rearm)
		require.True(t, rearm.Now.Equal(*state().FailedAt), "a failure a cooldown after it re-arms the cooldown")
		finish(t, h, delivery.Finish{EndpointID: ep, Settle: delivery.SettleSuccess, Now: t0.Add(2 * time.Hour)})
		got = state()
		require.Nil(t, got.FailingSince, "a success clears it")
		require.Nil(t, got.FailedAt, "and the latest failure")
		finish(t, h, delivery.Finish{EndpointID: ep, Settle: delivery.SettleNone, Now: t0.Add(3 * time.Hour)})

		require.False(t, finish(t, h, failure(ep, t0)).Disabled)
		require.False(t, finish(t, h, failure(ep, t0.Add(delivery.DisableAfter-time.Second))).Disabled)
		require.True(t, state().Enabled)
		require.True(t, finish(t, h, failure(ep, t0.Add(delivery.DisableAfter))).Disabled, "DisableAfter of failure disables")
		got = state()
		require.False(t, got.Enabled)
		require.True(t, t0.Equal(*got.FailingSince))
		require.False(t, finish(t, h, failure(ep, t0.Add(delivery.DisableAfter+time.Hour))).Disabled, "disabled once")
	}},
	{"an attempt's recorded outcome is read back by job and attempt", func(t *testing.T, h Harness) {
		ep := h.NewEndpoint(t, h.NewOwner(t), 1)
		ev := h.NewEvent(t, ep)
		job := time.Now().UnixNano()
		for i, o := range []delivery.Outcome{delivery.OutcomeRetryable, delivery.OutcomeCompleted} {
			finish(t, h, delivery.Finish{EndpointID: ep, Now: t0, Attempt: &delivery.Attempt{
				JobID: job, EndpointID: ep, EventID: ev, Attempt: i + 1, Outcome: o, At: t0,
			}})
		}
		for _, c := range []struct {
			job     int64
			attempt int
			want    delivery.Outcome
		}{{job, 1, delivery.OutcomeRetryable}, {job, 2, delivery.OutcomeCompleted}, {job, 3, ""}, {job + 1, 1, ""}} {
			o, ok, err := h.Store.AttemptOutcome(context.Background(), c.job, c.attempt)
			require.NoError(t, err)
			require.Equal(t, c.want != "", ok, "job %d attempt %d", c.job, c.attempt)
			require.Equal(t, c.want, o)
		}
	}},
	{"the fan-out reads the event, or finds it gone", func(t *testing.T, h Harness) {
		ep := h.NewEndpoint(t, h.NewOwner(t), 1)
		id := h.NewEvent(t, ep)
		ev, err := h.Fanout.Event(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, id, ev.ID)
		c, _ := take(t, h, ep, id, time.Minute)
		require.Equal(t, c.Endpoint.OwnerID, ev.OwnerID)
		require.Equal(t, *c.Event, ev, "the fan-out and the lease read the same event")
		_, err = h.Fanout.Event(context.Background(), uuid.New())
		require.ErrorIs(t, err, delivery.ErrGone)
	}},
	{"a deleted endpoint's claim is a disabled endpoint's, without a lease", func(t *testing.T, h Harness) {
		ep := h.NewEndpoint(t, h.NewOwner(t), 1)
		ev := h.NewEvent(t, ep)
		h.DeleteEndpoint(t, ep)
		c, err := h.Store.TakeLease(context.Background(), ep, ev, uuid.New(), time.Minute)
		require.NoError(t, err, "a deleted endpoint is not gone until the retention purges it")
		require.Equal(t, ep, c.Endpoint.ID)
		require.False(t, c.Endpoint.Enabled)
		require.Nil(t, c.Lease)
		_, err = h.Store.TakeLease(context.Background(), uuid.New(), ev, uuid.New(), time.Minute)
		require.ErrorIs(t, err, delivery.ErrGone, "an endpoint no row holds is gone")
	}},
	{"the fan-out lists the owner's endpoints, enabled or not, never deleted", func(t *testing.T, h Harness) {
		owner, other := h.NewOwner(t), h.NewOwner(t)
		on, off, gone := h.NewEndpoint(t, owner, 3), h.NewEndpoint(t, owner, 1), h.NewEndpoint(t, owner, 1)
		h.NewEndpoint(t, other, 1)
		finish(t, h, failure(off, t0))
		finish(t, h, failure(off, t0.Add(delivery.DisableAfter)))
		h.DeleteEndpoint(t, gone)
		eps, err := h.Fanout.Endpoints(context.Background(), owner)
		require.NoError(t, err)
		byID := map[uuid.UUID]delivery.Endpoint{}
		for _, e := range eps {
			require.Equal(t, owner, e.OwnerID)
			byID[e.ID] = e
		}
		require.Len(t, byID, 2)
		require.True(t, byID[on].Enabled)
		require.Equal(t, 3, byID[on].MaxInFlight)
		require.Equal(t, []string{"*"}, byID[on].EventTypes)
		require.Nil(t, byID[on].FailingSince)
		require.False(t, byID[off].Enabled)
		require.True(t, t0.Equal(*byID[off].FailingSince))
	}},
	{"enqueue queues one delivery per endpoint and event", func(t *testing.T, h Harness) {
		owner := h.NewOwner(t)
		a, b := h.NewEndpoint(t, owner, 1), h.NewEndpoint(t, owner, 1)
		ev, ev2 := h.NewEvent(t, a), h.NewEvent(t, a)
		first, err := h.Fanout.Enqueue(context.Background(), []delivery.Delivery{{EndpointID: a, EventID: ev}, {EndpointID: b, EventID: ev}}, delivery.Summary{EventID: ev})
		require.NoError(t, err)
		require.Len(t, first, 2)
		require.False(t, first[0].Duplicate)
		require.False(t, first[1].Duplicate)
		require.NotEqual(t, first[0].JobID, first[1].JobID)
		again, err := h.Fanout.Enqueue(context.Background(), []delivery.Delivery{{EndpointID: a, EventID: ev}, {EndpointID: a, EventID: ev2}}, delivery.Summary{EventID: ev})
		require.NoError(t, err)
		require.Len(t, again, 2)
		require.Equal(t, delivery.Enqueued{JobID: first[0].JobID, Duplicate: true}, again[0], "the fan-out ran twice: nothing new")
		require.False(t, again[1].Duplicate)
		require.NotContains(t, []int64{first[0].JobID, first[1].JobID}, again[1].JobID)
	}},
}
