package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/entity"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery/deliverytest"
)

// identityUnseal "opens" a secret sealed as its plaintext, checking that
// the associated data is the endpoint id, as the real box would.
func identityUnseal(want uuid.UUID) delivery.UnsealFunc {
	return func(sealed, ad []byte) ([]byte, error) {
		if !bytes.Equal(ad, want[:]) {
			return nil, errors.New("sealed for another row")
		}
		return sealed, nil
	}
}

var fixedNow = time.Date(2026, 9, 27, 12, 0, 0, 0, time.UTC)

type bundle struct {
	store    *deliverytest.Stub
	poster   *deliverytest.Poster
	deps     delivery.DeliverDeps
	ep       delivery.Endpoint
	ev       delivery.Event
	evGone   bool
	secret   string
	finishes []delivery.Finish
	posts    []delivery.PostRequest
	mu       sync.Mutex
	d        *delivery.Deliverer
}

func (b *bundle) recorded() ([]delivery.Finish, []delivery.PostRequest) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]delivery.Finish(nil), b.finishes...), append([]delivery.PostRequest(nil), b.posts...)
}

// setup builds a deliverer whose endpoint is free and answers 204.
func setup(t *testing.T) *bundle {
	t.Helper()
	secret, err := standardwebhooks.NewSecret()
	require.NoError(t, err)
	epID, evID, owner := uuid.New(), uuid.New(), uuid.New()
	b := &bundle{secret: secret}
	b.ep = delivery.Endpoint{
		ID: epID, OwnerID: owner, URL: "https://receiver.example/hook", EventTypes: []string{"*"},
		Headers: map[string]string{"X-Tenant": "t1"}, MaxInFlight: 1, Enabled: true, SecretSealed: []byte(secret),
	}
	b.ev = delivery.Event{ID: evID, OwnerID: owner, Type: domain.EventCodeIssued, Subject: "code:1", OccurredAt: fixedNow.Add(-time.Minute),
		Data: json.RawMessage(`{"code_id":"1"}`)}
	b.store = &deliverytest.Stub{
		EventFunc: func(context.Context, uuid.UUID) (delivery.Event, error) { return b.ev, nil },
		TakeLeaseFunc: func(_ context.Context, id, _, token uuid.UUID, _ time.Duration) (delivery.Claim, error) {
			return b.claim(&delivery.Lease{EndpointID: id, Token: token}), nil
		},
		FinishFunc: func(_ context.Context, f delivery.Finish) (delivery.Settled, error) {
			b.mu.Lock()
			b.finishes = append(b.finishes, f)
			b.mu.Unlock()
			return delivery.Settled{}, nil
		},
	}
	b.poster = &deliverytest.Poster{PostFunc: func(_ context.Context, req delivery.PostRequest) (delivery.PostResponse, error) {
		b.mu.Lock()
		b.posts = append(b.posts, req)
		b.mu.Unlock()
		return delivery.PostResponse{StatusCode: 204, Latency: 3 * time.Millisecond}, nil
	}}
	b.deps = delivery.DeliverDeps{
		Store: b.store, Poster: b.poster, Unseal: identityUnseal(epID),
		Clock: domain.ClockFunc(func() time.Time { return fixedNow }), Version: "test",
	}
	b.d = delivery.NewDeliverer(b.deps)
	return b
}

// claim answers TakeLease as the store would: no lease for a disabled
// endpoint or a gone event.
func (b *bundle) claim(l *delivery.Lease) delivery.Claim {
	c := delivery.Claim{Endpoint: b.ep}
	if !b.evGone {
		ev := b.ev
		c.Event = &ev
	}
	if b.ep.Enabled && c.Event != nil {
		c.Lease = l
	}
	return c
}

func (b *bundle) job() delivery.DeliverJob {
	return delivery.DeliverJob{JobID: 7, EndpointID: b.ep.ID, EventID: b.ev.ID, Attempt: 1}
}

func TestDeliverSignsAThinBodyAndSettlesSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.d.Deliver(context.Background(), b.job())
	require.Equal(t, delivery.OutcomeCompleted, res.Outcome)
	require.NoError(t, res.Err)

	finishes, posts := b.recorded()
	require.Len(t, posts, 1)
	req := posts[0]
	require.Equal(t, b.ep.URL, req.URL)
	require.Equal(t, "application/json", req.Header.Get("Content-Type"))
	require.Equal(t, "StandMeet-Webhooks/test", req.Header.Get("User-Agent"))
	require.Equal(t, "t1", req.Header.Get("X-Tenant"))
	require.Equal(t, b.ev.ID.String(), req.Header.Get("Webhook-Id"))
	require.Equal(t, "1790510400", req.Header.Get("Webhook-Timestamp"))

	key, err := standardwebhooks.ParseSecret(b.secret)
	require.NoError(t, err)
	v, err := standardwebhooks.NewVerifier(0, key)
	require.NoError(t, err)
	id, _, err := v.Verify(req.Header, req.Body, fixedNow)
	require.NoError(t, err)
	require.Equal(t, b.ev.ID.String(), id)
	require.JSONEq(t, `{"id":"`+b.ev.ID.String()+`","type":"code.issued","subject":"code:1",
		"occurred_at":"2026-09-27T11:59:00Z","data":{"code_id":"1"}}`, string(req.Body))

	require.Len(t, finishes, 1)
	f := finishes[0]
	require.NotNil(t, f.Lease, "the lease is released")
	require.Equal(t, delivery.SettleNone, f.Settle, "a success on an endpoint that is not failing writes nothing to it")
	require.NotNil(t, f.Attempt)
	require.Equal(t, delivery.OutcomeCompleted, f.Attempt.Outcome)
	require.Equal(t, 204, f.Attempt.StatusCode)
	require.Equal(t, int64(7), f.Attempt.JobID)
}

func TestASuccessClearsAFailingEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	since := fixedNow.Add(-time.Hour)
	b.ep.FailingSince = &since
	require.Equal(t, delivery.OutcomeCompleted, b.d.Deliver(context.Background(), b.job()).Outcome)
	finishes, _ := b.recorded()
	require.Len(t, finishes, 1)
	require.Equal(t, delivery.SettleSuccess, finishes[0].Settle)
}

func TestDeliverSignsWithBothSecretsDuringARotation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		until    time.Time
		wantSigs int
	}{
		{"within the grace", fixedNow.Add(time.Hour), 2},
		{"after the grace", fixedNow.Add(-time.Second), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			old, err := standardwebhooks.NewSecret()
			require.NoError(t, err)
			b.ep.PrevSecretSealed, b.ep.PrevSecretUntil = []byte(old), &c.until
			require.Equal(t, delivery.OutcomeCompleted, b.d.Deliver(context.Background(), b.job()).Outcome)
			_, posts := b.recorded()
			sigs := strings.Fields(posts[0].Header.Get("Webhook-Signature"))
			require.Len(t, sigs, c.wantSigs)
			for _, s := range []string{b.secret, old}[:c.wantSigs] {
				key, err := standardwebhooks.ParseSecret(s)
				require.NoError(t, err)
				v, err := standardwebhooks.NewVerifier(0, key)
				require.NoError(t, err)
				_, _, err = v.Verify(posts[0].Header, posts[0].Body, fixedNow)
				require.NoError(t, err, "a receiver holding either secret verifies")
			}
		})
	}
}

func TestDeliverOutcomes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		answer   func(ctx context.Context) (delivery.PostResponse, error)
		outcome  delivery.Outcome
		settle   delivery.Settle
		snooze   time.Duration
		location string
	}{
		{"500", func(context.Context) (delivery.PostResponse, error) {
			return delivery.PostResponse{StatusCode: 500}, nil
		}, delivery.OutcomeRetryable, delivery.SettleFailure, 0, ""},
		{"410", func(context.Context) (delivery.PostResponse, error) {
			return delivery.PostResponse{StatusCode: 410}, nil
		}, delivery.OutcomeDiscarded, delivery.SettleFailure, 0, ""},
		{"429 Retry-After", func(context.Context) (delivery.PostResponse, error) {
			return delivery.PostResponse{StatusCode: 429, Header: domain.Header{"Retry-After": {"3"}}}, nil
		}, delivery.OutcomeSnoozed, delivery.SettleFailure, 3 * time.Second, ""},
		{"302", func(context.Context) (delivery.PostResponse, error) {
			return delivery.PostResponse{StatusCode: 302, Header: domain.Header{"Location": {"https://x.example/"}}}, nil
		}, delivery.OutcomeRetryable, delivery.SettleFailure, 0, "https://x.example/"},
		{"blocked", func(context.Context) (delivery.PostResponse, error) {
			return delivery.PostResponse{}, delivery.ErrBlocked
		}, delivery.OutcomeDiscarded, delivery.SettleFailure, 0, ""},
		{"timeout", func(context.Context) (delivery.PostResponse, error) {
			return delivery.PostResponse{}, delivery.ErrTimeout
		}, delivery.OutcomeRetryable, delivery.SettleFailure, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.poster.PostFunc = func(ctx context.Context, _ delivery.PostRequest) (delivery.PostResponse, error) { return c.answer(ctx) }
			res := b.d.Deliver(context.Background(), b.job())
			require.Equal(t, c.outcome, res.Outcome)
			require.Equal(t, c.snooze, res.Snooze)
			require.Error(t, res.Err)
			finishes, _ := b.recorded()
			require.Len(t, finishes, 1)
			f := finishes[0]
			require.NotNil(t, f.Lease)
			require.Equal(t, c.settle, f.Settle)
			require.Equal(t, delivery.DisableAfter, f.DisableAfter)
			require.Equal(t, delivery.Cooldown, f.Cooldown, "a failure re-arms a passed cooldown")
			require.True(t, strings.HasPrefix(f.DisableReason, "deliveries failed continuously for 5 days; last: "), f.DisableReason)
			require.Equal(t, c.outcome, f.Attempt.Outcome)
			require.Equal(t, c.location, f.Attempt.Location)
		})
	}
}

func TestDeliverDiscardsWithoutPosting(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		arrange   func(b *bundle)
		wantLease bool
		wantLog   bool
	}{
		{"endpoint deleted", func(b *bundle) {
			b.store.TakeLeaseFunc = func(context.Context, uuid.UUID, uuid.UUID, uuid.UUID, time.Duration) (delivery.Claim, error) {
				return delivery.Claim{}, delivery.ErrGone
			}
		}, false, false},
		{"endpoint disabled", func(b *bundle) { b.ep.Enabled = false }, false, true},
		{"event pruned", func(b *bundle) { b.evGone = true }, false, true},
		{"type no longer subscribed", func(b *bundle) { b.ep.EventTypes = []string{"corpus.*"} }, true, true},
		{"raw note", func(b *bundle) {
			b.ev.Type, b.ev.Subject = domain.EventCorpusNoteChanged, "raw://diary/today"
			b.ev.Data = json.RawMessage(`{"published":true,"was_published":true}`)
		}, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			c.arrange(b)
			res := b.d.Deliver(context.Background(), b.job())
			require.Equal(t, delivery.OutcomeDiscarded, res.Outcome)
			require.Error(t, res.Err)
			finishes, posts := b.recorded()
			require.Empty(t, posts)
			for _, f := range finishes {
				require.Equal(t, delivery.SettleNone, f.Settle, "our own reasons do not mark the endpoint failing")
			}
			released, logged := false, false
			for _, f := range finishes {
				released = released || f.Lease != nil
				logged = logged || f.Attempt != nil
			}
			require.Equal(t, c.wantLease, released)
			require.Equal(t, c.wantLog, logged)
		})
	}
}

func TestDeliverInterruptedIsNotTheReceiversFault(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	b.poster.PostFunc = func(ctx context.Context, _ delivery.PostRequest) (delivery.PostResponse, error) {
		cancel()
		return delivery.PostResponse{}, ctx.Err()
	}
	res := b.d.Deliver(ctx, b.job())
	require.Equal(t, delivery.OutcomeRetryable, res.Outcome)
	finishes, _ := b.recorded()
	require.Len(t, finishes, 1)
	require.NotNil(t, finishes[0].Lease, "the lease is released with a context of its own")
	require.Equal(t, delivery.SettleNone, finishes[0].Settle)
}

func TestDeliverWithABrokenSecretRetriesWithoutBlamingTheReceiver(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.deps.Unseal = identityUnseal(uuid.New()) // sealed for another row
	b.d = delivery.NewDeliverer(b.deps)
	res := b.d.Deliver(context.Background(), b.job())
	require.Equal(t, delivery.OutcomeRetryable, res.Outcome)
	finishes, posts := b.recorded()
	require.Empty(t, posts)
	require.Len(t, finishes, 1)
	require.Equal(t, delivery.SettleNone, finishes[0].Settle)
}

// waiting is how many deliveries wait in process for the endpoint.
func (b *bundle) waiting() int { return b.d.Waiting(b.ep.ID) }

// useMemory makes deliverytest.Memory, holding the bundle's endpoint and
// event, answer TakeLease and Finish (which the bundle still
// records).
func (b *bundle) useMemory() *deliverytest.Memory {
	m := deliverytest.NewMemory()
	m.PutEndpoint(b.ep)
	m.PutEvent(b.ev)
	b.store.TakeLeaseFunc = m.TakeLease
	b.store.FinishFunc = func(ctx context.Context, f delivery.Finish) (delivery.Settled, error) {
		b.mu.Lock()
		b.finishes = append(b.finishes, f)
		b.mu.Unlock()
		return m.Finish(ctx, f)
	}
	return m
}

func TestABusyDeliveryWaitsInProcessAndIsHandedTheLease(t *testing.T) {
	t.Parallel()
	b := setup(t)
	lease := b.useMemory()
	holding := make(chan struct{})
	proceed := make(chan struct{})
	var first sync.Once
	b.poster.PostFunc = func(context.Context, delivery.PostRequest) (delivery.PostResponse, error) {
		blocked := false
		first.Do(func() { blocked = true })
		if blocked {
			close(holding)
			<-proceed
		}
		return delivery.PostResponse{StatusCode: 200}, nil
	}
	results := make(chan delivery.Result, 2)
	go func() { results <- b.d.Deliver(context.Background(), b.job()) }()
	<-holding
	go func() { results <- b.d.Deliver(context.Background(), b.job()) }()
	require.Eventually(t, func() bool { return b.waiting() == 1 }, 10*time.Second, time.Millisecond)
	// A holder is here: the waiter does not poll PostgreSQL meanwhile.
	time.Sleep(delivery.LeaseRefresh / 4)
	close(proceed)
	for range 2 {
		require.Equal(t, delivery.OutcomeCompleted, (<-results).Outcome)
	}
	require.Equal(t, 1, lease.Takes(), "the holder's take alone: the waiter joined the holder here without asking")
	require.Zero(t, lease.Holders(b.ep.ID))
}

func TestABusyDeliveryThatFindsNoRoomSnoozes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.store.TakeLeaseFunc = func(context.Context, uuid.UUID, uuid.UUID, uuid.UUID, time.Duration) (delivery.Claim, error) {
		return b.claim(nil), nil // always busy
	}
	for range delivery.MaxLocalWaiters {
		require.True(t, b.d.Wait(b.ep.ID))
	}
	res := b.d.Deliver(context.Background(), b.job())
	require.Equal(t, delivery.OutcomeSnoozed, res.Outcome)
	require.GreaterOrEqual(t, res.Snooze, delivery.BusySnooze)
	require.Equal(t, delivery.MaxLocalWaiters, b.waiting(), "the line is as it was")
	finishes, posts := b.recorded()
	require.Empty(t, posts)
	for _, f := range finishes {
		require.Nil(t, f.Attempt, "a busy snooze is not an attempt")
	}
}

// A delivery to an endpoint that is down (failed CooldownAfter or more
// into its streak) waits out the rest of the cooldown from the failure
// that armed it, before posting, free slot or not: it snoozes at once,
// lets go of a slot it took, and records no attempt. The one that comes
// due after the cooldown posts (the probe), and a test event posts
// whenever a slot is free: the owner is trying the endpoint now.
func TestADeliveryToADownEndpointWaitsOutTheCooldown(t *testing.T) {
	t.Parallel()
	since := fixedNow.Add(-time.Minute)
	for _, tc := range []struct {
		name       string
		failedAt   time.Time
		test, busy bool
		wantPost   bool
		wantSnooze time.Duration
	}{
		{name: "down, a slot free", failedAt: since.Add(delivery.CooldownAfter), wantSnooze: delivery.Cooldown - time.Minute + delivery.CooldownAfter},
		{name: "down, every slot busy", failedAt: since.Add(delivery.CooldownAfter), busy: true, wantSnooze: delivery.Cooldown - time.Minute + delivery.CooldownAfter},
		{name: "failing, not yet down", failedAt: since.Add(delivery.CooldownAfter - time.Second), wantPost: true},
		{name: "down, the cooldown over", failedAt: fixedNow.Add(-delivery.Cooldown), wantPost: true},
		{name: "down, a test event", failedAt: since.Add(delivery.CooldownAfter), test: true, wantPost: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			s, at := since, tc.failedAt
			b.ep.FailingSince, b.ep.FailedAt = &s, &at
			if tc.test {
				b.ev.Type, b.ev.Data = domain.EventWebhookTest, json.RawMessage(`{"endpoint_id":"`+b.ep.ID.String()+`"}`)
			}
			if tc.busy {
				b.store.TakeLeaseFunc = func(context.Context, uuid.UUID, uuid.UUID, uuid.UUID, time.Duration) (delivery.Claim, error) {
					return b.claim(nil), nil
				}
			}
			res := b.d.Deliver(context.Background(), b.job())
			finishes, posts := b.recorded()
			if tc.wantPost {
				require.Equal(t, delivery.OutcomeCompleted, res.Outcome)
				require.Len(t, posts, 1)
				return
			}
			require.Equal(t, delivery.OutcomeSnoozed, res.Outcome)
			require.Equal(t, tc.wantSnooze, res.Snooze)
			require.Empty(t, posts)
			for _, f := range finishes {
				require.Nil(t, f.Attempt, "a cooldown's snooze is not an attempt")
			}
			if !tc.busy {
				require.Len(t, finishes, 1)
				require.NotNil(t, finishes[0].Lease, "the slot it took goes back")
			}
		})
	}
}

// Once a take here has found an endpoint down, its other deliveries here
// wait the cooldown out reading only their events: no take, no statement
// of their own. A test event still takes a slot and posts. The runs are
// retries after a failure River recorded: only the one that posts asks
// whether that attempt succeeded after all.
func TestADeliveryOfAnEndpointFoundDownHereSnoozesWithoutATake(t *testing.T) {
	t.Parallel()
	b := setup(t)
	since, at := fixedNow.Add(-time.Minute), fixedNow.Add(-time.Minute+delivery.CooldownAfter)
	b.ep.FailingSince, b.ep.FailedAt = &since, &at
	var takes, reads, asked atomic.Int64
	b.store.AttemptOutcomeFunc = func(context.Context, int64, int) (delivery.Outcome, bool, error) {
		asked.Add(1)
		return delivery.OutcomeRetryable, true, nil
	}
	retry := b.job()
	retry.Attempt, retry.PreviousErred = 2, true
	take := b.store.TakeLeaseFunc
	b.store.TakeLeaseFunc = func(ctx context.Context, id, ev, token uuid.UUID, ttl time.Duration) (delivery.Claim, error) {
		takes.Add(1)
		return take(ctx, id, ev, token, ttl)
	}
	b.store.EventFunc = func(context.Context, uuid.UUID) (delivery.Event, error) {
		reads.Add(1)
		return b.ev, nil
	}
	left := delivery.Cooldown - time.Minute + delivery.CooldownAfter
	res := b.d.Deliver(context.Background(), retry)
	require.Equal(t, delivery.OutcomeSnoozed, res.Outcome)
	require.Equal(t, left, res.Snooze)
	require.Equal(t, int64(1), takes.Load(), "the first delivery takes and finds the cooldown")

	res = b.d.Deliver(context.Background(), retry)
	require.Equal(t, delivery.OutcomeSnoozed, res.Outcome)
	require.InDelta(t, float64(left), float64(res.Snooze), float64(time.Second), "what is left of the cooldown as the take read it")
	require.Equal(t, int64(1), takes.Load(), "no take for a delivery of an endpoint known down here")
	require.Equal(t, int64(1), reads.Load(), "its event is read")
	require.Zero(t, asked.Load(), "a run that snoozes asks nothing of the attempt before")

	b.ev.Type, b.ev.Data = domain.EventWebhookTest, json.RawMessage(`{"endpoint_id":"`+b.ep.ID.String()+`"}`)
	res = b.d.Deliver(context.Background(), retry)
	require.Equal(t, delivery.OutcomeCompleted, res.Outcome, "a test event posts")
	require.Equal(t, int64(2), takes.Load())
	require.Equal(t, int64(1), asked.Load(), "the run that posts asks first")
	_, posts := b.recorded()
	require.Len(t, posts, 1)
}

// Deliveries waiting in line behind a holder here whose POST fails on an
// endpoint that is now down leave the line once a take here finds the
// cooldown: each snoozes what is left of it, long before MaxLocalWait.
func TestTheLineOfAnEndpointThatGoesDownEmptiesIntoTheCooldown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var down atomic.Bool
	since, at := fixedNow.Add(-time.Minute), fixedNow.Add(-time.Minute+delivery.CooldownAfter)
	b.store.TakeLeaseFunc = func(_ context.Context, id, _, token uuid.UUID, _ time.Duration) (delivery.Claim, error) {
		if down.Load() {
			c := b.claim(nil) // the failed holder's slot went to another process
			c.Endpoint.FailingSince, c.Endpoint.FailedAt = &since, &at
			return c, nil
		}
		return b.claim(&delivery.Lease{EndpointID: id, Token: token}), nil
	}
	holding, proceed := make(chan struct{}), make(chan struct{})
	var first sync.Once
	b.poster.PostFunc = func(context.Context, delivery.PostRequest) (delivery.PostResponse, error) {
		first.Do(func() {
			close(holding)
			<-proceed
		})
		return delivery.PostResponse{StatusCode: 500}, nil
	}
	go b.d.Deliver(context.Background(), b.job())
	<-holding
	const waiters = 3
	results := make(chan delivery.Result, waiters)
	for range waiters {
		go func() { results <- b.d.Deliver(context.Background(), b.job()) }()
	}
	require.Eventually(t, func() bool { return b.waiting() == waiters }, 10*time.Second, time.Millisecond)
	down.Store(true)
	start := time.Now()
	close(proceed)
	for range waiters {
		res := <-results
		require.Equal(t, delivery.OutcomeSnoozed, res.Outcome)
		require.Equal(t, delivery.Cooldown-time.Minute+delivery.CooldownAfter, res.Snooze)
	}
	require.Less(t, time.Since(start), delivery.MaxLocalWait, "they left the line when a take found the cooldown")
	require.Zero(t, b.waiting())
}

// A delivery whose endpoint's slots are all held by another process (or
// by a holder that died) snoozes at once: nothing here will pass it one,
// and its worker is not held while the holder elsewhere works.
func TestADeliveryOfASlotHeldElsewhereSnoozesAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var takes atomic.Int64
	b.store.TakeLeaseFunc = func(context.Context, uuid.UUID, uuid.UUID, uuid.UUID, time.Duration) (delivery.Claim, error) {
		takes.Add(1)
		return b.claim(nil), nil // held by another process
	}
	start := time.Now()
	res := b.d.Deliver(context.Background(), b.job())
	require.Equal(t, delivery.OutcomeSnoozed, res.Outcome)
	require.Equal(t, delivery.BusySnooze, res.Snooze)
	require.Less(t, time.Since(start), delivery.MaxLocalWait)
	require.Equal(t, int64(1), takes.Load(), "one take, no polling")
	require.Zero(t, b.waiting())
	require.Equal(t, int64(1), b.d.Stats().BusySnoozes)
}

// A delivery that gives up in line behind a receiver that stopped
// answering sleeps the cooldown (as BackoffScale divides it): the first
// success that empties the line wakes it, and coming back sooner would
// only wait in vain behind the next holder that hangs.
func TestAGiveUpBehindAReceiverThatStoppedAnsweringSleepsTheCooldown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.deps.BackoffScale = 60
	b.d = delivery.NewDeliverer(b.deps)
	b.useMemory()
	hold := make(chan struct{})
	var posts atomic.Int64
	b.poster.PostFunc = func(context.Context, delivery.PostRequest) (delivery.PostResponse, error) {
		switch posts.Add(1) {
		case 1:
			return delivery.PostResponse{}, delivery.ErrTimeout
		case 2:
			<-hold
		}
		return delivery.PostResponse{StatusCode: 204}, nil
	}
	require.Equal(t, delivery.OutcomeRetryable, b.d.Deliver(context.Background(), b.job()).Outcome)
	results := make(chan delivery.Result, 2)
	go func() { results <- b.d.Deliver(context.Background(), b.job()) }()
	require.Eventually(t, func() bool { return posts.Load() == 2 }, 10*time.Second, time.Millisecond)
	go func() { results <- b.d.Deliver(context.Background(), b.job()) }()
	require.Eventually(t, func() bool { return b.waiting() == 1 }, 10*time.Second, time.Millisecond)
	res := b.d.Deliver(context.Background(), b.job())
	require.Equal(t, delivery.OutcomeSnoozed, res.Outcome)
	require.Equal(t, delivery.Cooldown/60, res.Snooze)
	close(hold)
	for range 2 {
		require.Equal(t, delivery.OutcomeCompleted, (<-results).Outcome)
	}
}

// A delivery that gives up after MaxLocalWait in line behind deliveries
// here, having joined a holder here without asking PostgreSQL, snoozes
// for the wait it estimates: at least as long as the slot has now gone
// unserved, however fast the deliveries before went. Coming back sooner
// would only wait in vain behind a holder that hangs; a holder that
// finishes with a success wakes it instead.
func TestAGivingUpDeliverySnoozesForTheWaitAheadOfIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.useMemory()
	const ahead = 5
	release, hold := make(chan struct{}), make(chan struct{})
	var posts atomic.Int64
	b.poster.PostFunc = func(context.Context, delivery.PostRequest) (delivery.PostResponse, error) {
		switch posts.Add(1) {
		case 1:
			<-release
		case ahead + 1:
			<-hold
		}
		return delivery.PostResponse{StatusCode: 200}, nil
	}
	results := make(chan delivery.Result, ahead+1)
	go func() { results <- b.d.Deliver(context.Background(), b.job()) }()
	require.Eventually(t, func() bool { return posts.Load() == 1 }, 10*time.Second, time.Millisecond)
	for i := range ahead {
		go func() { results <- b.d.Deliver(context.Background(), b.job()) }()
		require.Eventually(t, func() bool { return b.waiting() == i+1 }, 10*time.Second, time.Millisecond)
	}
	last := make(chan delivery.Result, 1)
	go func() { last <- b.d.Deliver(context.Background(), b.job()) }()
	require.Eventually(t, func() bool { return b.waiting() == ahead+1 }, 10*time.Second, time.Millisecond)
	close(release)
	// The holder and four more post; the fifth holds the lease past the
	// last one's MaxLocalWait.
	res := <-last
	require.Equal(t, delivery.OutcomeSnoozed, res.Outcome)
	require.Greater(t, res.Snooze, delivery.MaxLocalWait/2, "the fifth has held the slot for most of MaxLocalWait")
	require.Less(t, res.Snooze, 2*delivery.MaxLocalWait, "none is left before it")
	close(hold)
	for range ahead + 1 {
		require.Equal(t, delivery.OutcomeCompleted, (<-results).Outcome)
	}
}

// A delivery that snoozed because its endpoint's line here was busy is
// woken by the run that empties that line with a success: the snooze was
// an estimate, and the endpoint would otherwise sit idle until it ended.
// A failure leaves it asleep (a failing endpoint's deliveries wait out the
// cooldown), and so does a line still in use. One whose snooze River has
// not recorded yet (still running) is woken by a second try, unless it ran
// here again meanwhile: that run may sleep a receiver's Retry-After.
func TestTheRunThatEmptiesTheLineWakesTheDeliveriesThatLeftIt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		last         int  // the status of the last delivery in line
		stillRunning bool // River records the snooze after the first wake
		ranAgain     bool // the delivery runs again before the second try
		wantWake     bool
	}{
		{name: "the line empties with a success", last: 204, wantWake: true},
		{name: "the line empties with a success before River records the snooze", last: 204, stillRunning: true, wantWake: true},
		{name: "a delivery that ran again before the second try is not woken again", last: 204, stillRunning: true, ranAgain: true},
		{name: "the line empties with a failure", last: 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.useMemory()
			woken := make(chan []int64, 4)
			var wakes atomic.Int64
			var again func()
			b.store.WakeFunc = func(_ context.Context, jobs []int64) (int, []int64, error) {
				woken <- jobs
				if c.stillRunning && wakes.Add(1) == 1 {
					if again != nil {
						again()
					}
					return 0, jobs, nil
				}
				return len(jobs), nil, nil
			}
			release, results, job := b.lineBehindAHolder(t, c.last)
			if c.ranAgain {
				// It runs again (it was fetched: its snooze had ended) and
				// finishes before the wake's second try.
				again = func() {
					require.Equal(t, delivery.OutcomeCompleted, b.d.Deliver(context.Background(), job(3)).Outcome)
				}
			}
			// The second in line behind a holder that does not answer gives
			// its worker back.
			res := b.d.Deliver(context.Background(), job(3))
			require.Equal(t, delivery.OutcomeSnoozed, res.Outcome)
			require.Empty(t, woken, "the line is still in use")
			close(release)
			<-results
			<-results
			if c.ranAgain {
				require.Equal(t, []int64{3}, <-woken)
				require.Never(t, func() bool { return len(woken) > 0 }, 500*time.Millisecond, 10*time.Millisecond,
					"a delivery that ran again is not woken again")
				return
			}
			if !c.wantWake {
				require.Never(t, func() bool { return len(woken) > 0 }, 300*time.Millisecond, 10*time.Millisecond)
				return
			}
			tries := 1
			if c.stillRunning {
				tries = 2
			}
			for range tries {
				select {
				case jobs := <-woken:
					require.Equal(t, []int64{3}, jobs)
				case <-time.After(5 * time.Second):
					require.Fail(t, "the delivery that left the line was not woken")
				}
			}
			require.Eventually(t, func() bool { return b.d.Stats().Wakes == 1 }, 5*time.Second, time.Millisecond)
			// Woken once: it runs again, and a line emptied after that has
			// nobody to wake.
			require.Equal(t, delivery.OutcomeCompleted, b.d.Deliver(context.Background(), job(3)).Outcome)
			require.Empty(t, woken)
		})
	}
}

func fanoutBundle(t *testing.T, eps []delivery.Endpoint, ev delivery.Event, admits delivery.EmbedAdmitsFunc) (*delivery.Fanouter, *[]delivery.Delivery) {
	t.Helper()
	var got []delivery.Delivery
	store := &deliverytest.Stub{
		EventFunc:     func(context.Context, uuid.UUID) (delivery.Event, error) { return ev, nil },
		EndpointsFunc: func(context.Context, uuid.UUID) ([]delivery.Endpoint, error) { return eps, nil },
		EnqueueFunc: func(_ context.Context, ds []delivery.Delivery) ([]delivery.Enqueued, error) {
			got = append(got, ds...)
			out := make([]delivery.Enqueued, len(ds))
			for i := range ds {
				out[i] = delivery.Enqueued{JobID: int64(len(got) - len(ds) + i + 1)}
			}
			return out, nil
		},
	}
	return delivery.NewFanouter(delivery.FanoutDeps{Store: store, EmbedAdmits: admits, Clock: domain.ClockFunc(func() time.Time { return fixedNow })}), &got
}

func TestFanoutMatchesGlobsScopeAndCooldown(t *testing.T) {
	t.Parallel()
	failing := fixedNow.Add(-time.Hour)
	embed := uuid.New()
	all := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"*"}, Enabled: true}
	corpus := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"corpus.*"}, Enabled: true}
	codes := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"code.*"}, Enabled: true}
	// Failing for an hour, failed again a second ago.
	lately := fixedNow.Add(-time.Second)
	sick := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"*"}, Enabled: true, FailingSince: &failing, FailedAt: &lately}
	// Failing for less than CooldownAfter: one failure among successes.
	justFailed := fixedNow.Add(-delivery.CooldownAfter + time.Second)
	blip := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"code.*"}, Enabled: true, FailingSince: &justFailed, FailedAt: &justFailed}
	// Failed once an hour ago and not tried since (its retry still to
	// run, no event since): not known to be down.
	lone := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"code.*"}, Enabled: true, FailingSince: &failing, FailedAt: &failing}
	embedded := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"*"}, Enabled: true, EmbedID: &embed}
	eps := []delivery.Endpoint{all, corpus, codes, sick, blip, lone, embedded}
	admitsSoftware := func(_ context.Context, id uuid.UUID, e entity.CorpusEntry) (bool, error) {
		return id == embed && entity.AllowsCorpusEntry([]string{"wiki://software/*"}, nil, true, e), nil
	}
	note := func(subject string, published, was bool) delivery.Event {
		data, _ := json.Marshal(map[string]any{"published": published, "was_published": was})
		return delivery.Event{ID: uuid.New(), Type: domain.EventCorpusNoteChanged, Subject: subject, Data: data}
	}
	cases := []struct {
		name string
		ev   delivery.Event
		want []uuid.UUID
	}{
		{"code event", delivery.Event{ID: uuid.New(), Type: domain.EventCodeIssued, Data: json.RawMessage(`{}`)}, []uuid.UUID{all.ID, codes.ID, sick.ID, blip.ID, lone.ID, embedded.ID}},
		{"published note in the embed's scope", note("wiki://software/x", true, false), []uuid.UUID{all.ID, corpus.ID, sick.ID, embedded.ID}},
		{"published note outside the embed's scope", note("wiki://private/x", true, false), []uuid.UUID{all.ID, corpus.ID, sick.ID}},
		{"unpublish is heard", note("wiki://software/x", false, true), []uuid.UUID{all.ID, corpus.ID, sick.ID, embedded.ID}},
		{"draft is not", note("wiki://software/x", false, false), nil},
		{"raw never leaves", note("raw://software/x", true, true), nil},
		{"test event to its endpoint only", delivery.Event{ID: uuid.New(), Type: domain.EventWebhookTest,
			Data: json.RawMessage(`{"endpoint_id":"` + codes.ID.String() + `"}`)}, []uuid.UUID{codes.ID}},
		{"test event to a failing endpoint is not cooled down", delivery.Event{ID: uuid.New(), Type: domain.EventWebhookTest,
			Data: json.RawMessage(`{"endpoint_id":"` + sick.ID.String() + `"}`)}, []uuid.UUID{sick.ID}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, got := fanoutBundle(t, eps, c.ev, admitsSoftware)
			n, err := f.Fanout(context.Background(), c.ev.ID)
			require.NoError(t, err)
			require.Equal(t, len(c.want), n)
			var ids []uuid.UUID
			for _, d := range *got {
				ids = append(ids, d.EndpointID)
				require.Equal(t, c.ev.ID, d.EventID)
				switch {
				case d.EndpointID == sick.ID && c.ev.Type != domain.EventWebhookTest:
					require.Equal(t, fixedNow.Add(delivery.Cooldown), d.ScheduledAt, "an endpoint failing for an hour, lately too, is cooled down")
					require.Equal(t, delivery.ReasonCoolingDown, d.Wait)
				case d.EndpointID == blip.ID || d.EndpointID == lone.ID:
					require.True(t, d.ScheduledAt.IsZero(), "an endpoint with no failure CooldownAfter into its streak is not cooled down")
					require.Empty(t, d.Wait)
				default:
					require.True(t, d.ScheduledAt.IsZero())
				}
			}
			require.ElementsMatch(t, c.want, ids)
		})
	}
}

func TestFanoutOfAGoneOrInternalEventDoesNothing(t *testing.T) {
	t.Parallel()
	store := &deliverytest.Stub{
		EventFunc: func(context.Context, uuid.UUID) (delivery.Event, error) { return delivery.Event{}, delivery.ErrGone },
		EnqueueFunc: func(context.Context, []delivery.Delivery) ([]delivery.Enqueued, error) {
			t.Fatal("nothing must be queued")
			return nil, nil
		},
	}
	n, err := delivery.NewFanouter(delivery.FanoutDeps{Store: store}).Fanout(context.Background(), uuid.New())
	require.NoError(t, err)
	require.Zero(t, n)

	store.EventFunc = func(context.Context, uuid.UUID) (delivery.Event, error) {
		return delivery.Event{Type: "undeclared.type"}, nil
	}
	n, err = delivery.NewFanouter(delivery.FanoutDeps{Store: store}).Fanout(context.Background(), uuid.New())
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestAFinishingHolderPassesTheLeaseToTheWaiter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// status is the first delivery's answer.
		status int
		// disable makes the first delivery's Finish disable the endpoint.
		disable bool
		// stale holds the first POST past LeaseRefresh.
		stale      bool
		wantSecond delivery.Outcome
		wantTakes  int
		wantInMem  bool
	}{
		{name: "a success passes it in memory", status: 200, wantSecond: delivery.OutcomeCompleted, wantTakes: 1, wantInMem: true},
		{name: "a failure releases it and the waiter takes it afresh", status: 500, wantSecond: delivery.OutcomeCompleted, wantTakes: 2},
		{name: "a disabled endpoint discards the waiter", status: 500, disable: true, wantSecond: delivery.OutcomeDiscarded, wantTakes: 2},
		{name: "a lease held LeaseRefresh goes back to PostgreSQL", status: 200, stale: true, wantSecond: delivery.OutcomeCompleted, wantTakes: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if tc.disable {
				// Failing for DisableAfter already: the first delivery's
				// failure disables the endpoint.
				since := fixedNow.Add(-delivery.DisableAfter)
				b.ep.FailingSince = &since
			}
			lease := b.useMemory()
			holding := make(chan struct{})
			proceed := make(chan struct{})
			var first sync.Once
			b.poster.PostFunc = func(_ context.Context, req delivery.PostRequest) (delivery.PostResponse, error) {
				b.mu.Lock()
				b.posts = append(b.posts, req)
				b.mu.Unlock()
				blocked := false
				first.Do(func() { blocked = true })
				if blocked {
					close(holding)
					<-proceed
					return delivery.PostResponse{StatusCode: tc.status}, nil
				}
				return delivery.PostResponse{StatusCode: 200}, nil
			}
			firstDone := make(chan delivery.Result, 1)
			go func() { firstDone <- b.d.Deliver(context.Background(), b.job()) }()
			<-holding
			second := make(chan delivery.Result, 1)
			go func() { second <- b.d.Deliver(context.Background(), b.job()) }()
			require.Eventually(t, func() bool { return b.waiting() == 1 }, 10*time.Second, time.Millisecond)
			if tc.stale {
				time.Sleep(delivery.LeaseRefresh + 50*time.Millisecond)
			}
			close(proceed)
			<-firstDone
			require.Equal(t, tc.wantSecond, (<-second).Outcome)

			// The two deliveries finish concurrently, so their writes are
			// told apart by what they carry, not by their order.
			finishes, _ := b.recorded()
			require.NotEmpty(t, finishes)
			unwritten := 0
			for _, f := range finishes {
				if f.Lease == nil && f.Attempt != nil && f.Attempt.StatusCode != 0 {
					unwritten++
				}
			}
			if tc.wantInMem {
				require.Equal(t, 1, unwritten, "a lease passed in memory is not written")
			} else {
				require.Zero(t, unwritten, "the lease is released in the finishing write")
			}
			require.Equal(t, tc.wantTakes, lease.Takes(), "the waiter takes the slot afresh unless it was passed")
			require.Zero(t, lease.Holders(b.ep.ID), "the lease is free once both are done")
			require.Zero(t, b.waiting())
		})
	}
}

func TestFanoutSummaryNamesEveryEndpointLeftOutWithItsReason(t *testing.T) {
	t.Parallel()
	failing := fixedNow.Add(-time.Hour)
	embed := uuid.New()
	got := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"corpus.*"}, Enabled: true}
	codes := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"code.*"}, Enabled: true}
	off := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"*"}}
	lately := fixedNow.Add(-time.Second)
	sick := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"*"}, Enabled: true, FailingSince: &failing, FailedAt: &lately}
	embedded := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"*"}, Enabled: true, EmbedID: &embed}
	eps := []delivery.Endpoint{got, codes, off, sick, embedded}
	admitsNothing := func(context.Context, uuid.UUID, entity.CorpusEntry) (bool, error) { return false, nil }
	note := func(subject string, published bool) delivery.Event {
		data, _ := json.Marshal(map[string]any{"published": published})
		return delivery.Event{ID: uuid.New(), Type: domain.EventCorpusNoteChanged, Subject: subject, Data: data}
	}
	until := fixedNow.Add(delivery.Cooldown)
	cases := []struct {
		name  string
		ev    delivery.Event
		want  map[delivery.Reason][]uuid.UUID
		until *time.Time
	}{
		{"published note", note("wiki://a", true), map[delivery.Reason][]uuid.UUID{
			delivery.ReasonNotSubscribed: {codes.ID}, delivery.ReasonDisabled: {off.ID}, delivery.ReasonEmbedCode: {embedded.ID},
			delivery.ReasonCoolingDown: {sick.ID}}, &until},
		{"unpublished note", note("wiki://a", false), map[delivery.Reason][]uuid.UUID{
			delivery.ReasonNotSubscribed: {codes.ID}, delivery.ReasonDisabled: {off.ID}, delivery.ReasonEmbedCode: {embedded.ID},
			delivery.ReasonUnpublished: {got.ID, sick.ID}}, nil},
		{"raw note", note("raw://inbox/1", true), map[delivery.Reason][]uuid.UUID{
			delivery.ReasonNotSubscribed: {codes.ID}, delivery.ReasonDisabled: {off.ID}, delivery.ReasonRaw: {got.ID, sick.ID, embedded.ID}}, nil},
		{"test event: only its endpoint counts", delivery.Event{ID: uuid.New(), Type: domain.EventWebhookTest,
			Data: json.RawMessage(`{"endpoint_id":"` + codes.ID.String() + `"}`)}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			store := &deliverytest.Stub{
				EventFunc:     func(context.Context, uuid.UUID) (delivery.Event, error) { return c.ev, nil },
				EndpointsFunc: func(context.Context, uuid.UUID) ([]delivery.Endpoint, error) { return eps, nil },
				EnqueueFunc: func(_ context.Context, ds []delivery.Delivery) ([]delivery.Enqueued, error) {
					return make([]delivery.Enqueued, len(ds)), nil
				},
			}
			f := delivery.NewFanouter(delivery.FanoutDeps{Store: store, EmbedAdmits: admitsNothing, Clock: domain.ClockFunc(func() time.Time { return fixedNow })})
			_, err := f.Fanout(context.Background(), c.ev.ID)
			require.NoError(t, err)
			if c.want == nil {
				require.Empty(t, store.Summaries())
				return
			}
			require.Len(t, store.Summaries(), 1, "one summary per event")
			s := store.Summaries()[0]
			require.Equal(t, c.ev.ID, s.EventID)
			require.Len(t, s.Reasons, len(c.want))
			for r, ids := range c.want {
				require.ElementsMatch(t, ids, s.Reasons[r], "%s", r)
			}
			require.Equal(t, c.until, s.Until)
		})
	}
}

func TestDeliverHonoursTheEndpointsTimeoutAndAttemptsAndReportsEachPost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		timeout, max  int
		attempt, code int
		err           error
		wantTimeout   time.Duration
		want          delivery.Outcome
		class         string
	}{
		{"defaults: 10 s, 18 attempts", 0, 0, 17, 500, nil, delivery.HTTPTimeout, delivery.OutcomeRetryable, "5xx"},
		{"the 18th of 18 is River's to discard", 0, 0, 18, 500, nil, delivery.HTTPTimeout, delivery.OutcomeRetryable, "5xx"},
		{"2 s, attempt 1 of 2 retries", 2, 2, 1, 503, nil, 2 * time.Second, delivery.OutcomeRetryable, "5xx"},
		{"attempt 2 of 2 is the last", 2, 2, 2, 500, nil, 2 * time.Second, delivery.OutcomeDiscarded, "5xx"},
		{"a timeout at the last attempt", 1, 1, 1, 0, delivery.ErrTimeout, time.Second, delivery.OutcomeDiscarded, delivery.ClassTimeout},
		{"a success at the last attempt", 1, 1, 1, 204, nil, time.Second, delivery.OutcomeCompleted, "2xx"},
		{"a 410 stays discarded", 3, 3, 1, 410, nil, 3 * time.Second, delivery.OutcomeDiscarded, "4xx"},
		{"a connection failure", 3, 3, 1, 0, errors.New("refused"), 3 * time.Second, delivery.OutcomeRetryable, delivery.ClassConnection},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.ep.TimeoutSeconds, b.ep.MaxAttempts = c.timeout, c.max
			b.poster.PostFunc = func(_ context.Context, req delivery.PostRequest) (delivery.PostResponse, error) {
				b.mu.Lock()
				b.posts = append(b.posts, req)
				b.mu.Unlock()
				return delivery.PostResponse{StatusCode: c.code, Latency: time.Millisecond}, c.err
			}
			var observed []delivery.Result
			b.deps.Observe = func(_ delivery.DeliverJob, res delivery.Result) { observed = append(observed, res) }
			b.d = delivery.NewDeliverer(b.deps)
			job := b.job()
			job.Attempt = c.attempt
			res := b.d.Deliver(context.Background(), job)
			require.Equal(t, c.want, res.Outcome)
			_, posts := b.recorded()
			require.Len(t, posts, 1)
			require.Equal(t, c.wantTimeout, posts[0].Timeout)
			finishes, _ := b.recorded()
			require.Equal(t, c.want, finishes[0].Attempt.Outcome)
			// The attempt records the signature headers it sent, even
			// when nothing answered.
			require.Equal(t, posts[0].Header.Get("webhook-timestamp"), finishes[0].Attempt.Timestamp)
			require.Equal(t, posts[0].Header.Get("webhook-signature"), finishes[0].Attempt.Signature)
			require.NotEmpty(t, finishes[0].Attempt.Signature)
			if c.want == delivery.OutcomeDiscarded && c.code != 410 {
				require.Contains(t, finishes[0].Attempt.Error, fmt.Sprintf("attempt %d of %d, the last", c.attempt, b.ep.Attempts()))
			}
			require.Len(t, observed, 1)
			require.Equal(t, c.class, observed[0].Class)
			require.Equal(t, b.ep.Attempts(), observed[0].Of)
			require.Same(t, finishes[0].Attempt, observed[0].Posted)
		})
	}
}

func TestDeliverReportsNoPostWhenItSentNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.ep.Enabled = false
	called := false
	b.deps.Observe = func(delivery.DeliverJob, delivery.Result) { called = true }
	b.d = delivery.NewDeliverer(b.deps)
	res := b.d.Deliver(context.Background(), b.job())
	require.Equal(t, delivery.OutcomeDiscarded, res.Outcome)
	require.False(t, called)
}

// A run after an attempt River recorded as an error posts again unless
// that attempt recorded a success itself: then only River's completion was
// lost (its process died after finishing), and the run completes without
// posting. Send again of a finished
// delivery, a retry after a failure and an unreadable record all post.
func TestARunAfterARecordedSuccessDoesNotPostAgain(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		previousErred bool
		attempt       int
		recorded      delivery.Outcome
		readErr       error
		wantPost      bool
	}{
		{"River lost the completion of a recorded success", true, 2, delivery.OutcomeCompleted, nil, false},
		{"a retry after a recorded failure", true, 2, delivery.OutcomeRetryable, nil, true},
		{"a discard River cancelled, sent again", true, 2, delivery.OutcomeDiscarded, nil, true},
		{"send again of a completed delivery", false, 2, delivery.OutcomeCompleted, nil, true},
		{"nothing recorded: the process died before finishing", true, 2, "", nil, true},
		{"the record cannot be read", true, 2, delivery.OutcomeCompleted, errors.New("connection reset"), true},
		{"a first attempt", true, 1, delivery.OutcomeCompleted, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			asked := 0
			b.store.AttemptOutcomeFunc = func(_ context.Context, jobID int64, attempt int) (delivery.Outcome, bool, error) {
				asked++
				require.Equal(t, int64(7), jobID)
				require.Equal(t, c.attempt-1, attempt)
				return c.recorded, c.recorded != "", c.readErr
			}
			job := b.job()
			job.Attempt, job.PreviousErred = c.attempt, c.previousErred
			res := b.d.Deliver(context.Background(), job)
			require.Equal(t, delivery.OutcomeCompleted, res.Outcome)
			finishes, posts := b.recorded()
			if c.wantPost {
				require.Len(t, posts, 1)
				require.Len(t, finishes, 1)
			} else {
				require.Empty(t, posts)
				require.Len(t, finishes, 1, "the slot it took goes back")
				require.NotNil(t, finishes[0].Lease)
				require.Nil(t, finishes[0].Attempt, "the recorded attempt's finish wrote everything else already")
				require.Equal(t, delivery.SettleNone, finishes[0].Settle)
				require.Nil(t, res.Posted)
			}
			require.Equal(t, c.readErr != nil, res.Warn != nil, "a failed read is the run's warning")
			require.Equal(t, c.previousErred && c.attempt > 1, asked == 1, "only a run after River's error asks")
		})
	}
}

// TestAWakeCountsWhatItWokeWhenItsSecondTryFails: a wake that makes one
// sleeper available and finds the other still running tries that one again;
// when the second try fails, the run reports the failure and the deliveries
// it did wake still count in Stats.
func TestAWakeCountsWhatItWokeWhenItsSecondTryFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.useMemory()
	var tries atomic.Int64
	b.store.WakeFunc = func(_ context.Context, jobs []int64) (int, []int64, error) {
		if tries.Add(1) == 1 {
			require.Equal(t, []int64{3, 4}, jobs)
			return 1, []int64{4}, nil
		}
		return 0, nil, errors.New("connection lost")
	}
	release, results, job := b.lineBehindAHolder(t, 204)
	// Two more behind a holder that does not answer give their workers back.
	require.Equal(t, delivery.OutcomeSnoozed, b.d.Deliver(context.Background(), job(3)).Outcome)
	require.Equal(t, delivery.OutcomeSnoozed, b.d.Deliver(context.Background(), job(4)).Outcome)
	close(release)
	var warns []error
	for range 2 {
		if res := <-results; res.Warn != nil {
			warns = append(warns, res.Warn)
		}
	}
	require.Len(t, warns, 1, "the run that woke them reports the failed second try")
	require.ErrorContains(t, warns[0], "connection lost")
	require.EqualValues(t, 2, tries.Load())
	require.EqualValues(t, 1, b.d.Stats().Wakes, "the delivery the first try woke counts")
}

// lineBehindAHolder runs job 1, whose POST hangs until release is closed and
// then answers 204 (every later POST answers last), and job 2, waiting in
// line behind it; results receives both runs' results. job(id) is a run of
// the bundle's delivery as job id.
func (b *bundle) lineBehindAHolder(t *testing.T, last int) (release chan struct{}, results chan delivery.Result, job func(int64) delivery.DeliverJob) {
	release = make(chan struct{})
	var posts atomic.Int64
	b.poster.PostFunc = func(context.Context, delivery.PostRequest) (delivery.PostResponse, error) {
		if posts.Add(1) == 1 {
			<-release
			return delivery.PostResponse{StatusCode: 204}, nil
		}
		return delivery.PostResponse{StatusCode: last}, nil
	}
	job = func(id int64) delivery.DeliverJob {
		j := b.job()
		j.JobID = id
		return j
	}
	results = make(chan delivery.Result, 2)
	go func() { results <- b.d.Deliver(context.Background(), job(1)) }()
	require.Eventually(t, func() bool { return posts.Load() == 1 }, 10*time.Second, time.Millisecond)
	go func() { results <- b.d.Deliver(context.Background(), job(2)) }()
	require.Eventually(t, func() bool { return b.waiting() == 1 }, 10*time.Second, time.Millisecond)
	return release, results, job
}
