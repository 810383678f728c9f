package inbound_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// failing is a handler test double: it returns what resultFunc says and
// counts its runs.
type failing struct {
	runs       atomic.Int64
	resultFunc func(m inbound.Message) error
	last       atomic.Pointer[inbound.Message]
}

func (f *failing) HandleInbound(_ context.Context, m inbound.Message) error {
	f.runs.Add(1)
	f.last.Store(&m)
	if f.resultFunc == nil {
		return nil
	}
	return f.resultFunc(m)
}

func (b *bundle) accept(t *testing.T, key []byte, srcID uuid.UUID, msgID, body string) uuid.UUID {
	t.Helper()
	r, err := b.gw.Receive(context.Background(), srcID, signed(key, msgID, b.clock.Now(), body))
	require.NoError(t, err)
	require.Equal(t, inbound.Accepted, r.Status)
	return r.ID
}

func TestProcessorRunsHandlersAndMarksDone(t *testing.T) {
	t.Parallel()
	h := &failing{}
	b := setup(t, inbound.Route{Name: "double", Kind: "standard-webhooks", EventType: "order.*", Handler: h})
	src, key := b.swSource(t)
	id := b.accept(t, key, src.ID, "m1", `{"type":"order.created"}`)

	out := b.process(t, id, inbound.Job{ID: 7, Attempt: 1, MaxAttempts: 5})
	require.Equal(t, inbound.OutcomeDone, out.Kind)
	require.Equal(t, 1, out.Handlers)
	require.EqualValues(t, 1, h.runs.Load())
	m := h.last.Load()
	require.Equal(t, "m1", m.MessageID)
	require.Equal(t, "order.created", m.EventType)
	require.Equal(t, `{"type":"order.created"}`, string(m.Body))
	require.Equal(t, 1, m.Attempt)
	require.Equal(t, b.owner, m.OwnerID)

	rec, _ := b.mem.Message(id)
	require.Equal(t, inbound.StateDone, rec.State)
	require.Equal(t, 1, rec.Attempts)
	require.EqualValues(t, 7, rec.JobID)
	require.Equal(t, b.clock.Now(), rec.DoneAt)

	again := b.process(t, id, inbound.Job{ID: 7, Attempt: 2, MaxAttempts: 5})
	require.Equal(t, inbound.OutcomeSkipped, again.Kind, "a job River runs twice does nothing the second time")
	require.EqualValues(t, 1, h.runs.Load())
}

// A message admitted with a job whose routes are gone by the time it runs
// (a replica with other routes) is done with no handler.
func TestProcessorWithoutRouteIsDone(t *testing.T) {
	t.Parallel()
	b := setup(t, wantsAll())
	src, key := b.swSource(t)
	id := b.accept(t, key, src.ID, "m1", `{}`)
	proc := inbound.NewProcessor(inbound.ProcessorDeps{Inbox: b.mem.States(), Clock: b.clock})
	out, err := proc.Process(context.Background(), id, inbound.Job{ID: 1, Attempt: 1, MaxAttempts: 5})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeDone, out.Kind)
	require.Zero(t, out.Handlers)
}

// A message no route can want is admitted done, processed when received
// with no attempt, and queues no job; its receipt is still recorded, and a
// stale job for it does nothing.
func TestAMessageNoRouteWantsIsAdmittedDone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := &failing{}
	b := setup(t, inbound.Route{Name: "github-only", Kind: verifier.KindGitHub, Handler: h})
	src, key := b.swSource(t)
	id := b.accept(t, key, src.ID, "m1", `{"type":"order.created"}`)

	rec, ok := b.mem.Message(id)
	require.True(t, ok)
	require.Equal(t, inbound.StateDone, rec.State)
	require.Equal(t, rec.ReceivedAt, rec.DoneAt)
	require.Zero(t, rec.Attempts)
	require.Empty(t, b.mem.Jobs())
	require.Len(t, b.receivedEvents(t), 1)
	m, err := b.svc.GetMessage(ctx, b.owner, inbound.MessageInput{ID: src.ID, MessageID: id})
	require.NoError(t, err)
	require.Equal(t, inbound.StatusDone, m.Status)
	require.Equal(t, "processed at "+b.clock.Now().UTC().Format(time.RFC3339), m.StatusDetail)

	require.Equal(t, inbound.OutcomeSkipped, b.process(t, id, inbound.Job{ID: 1, Attempt: 1, MaxAttempts: 5}).Kind)
	require.Zero(t, h.runs.Load())
}

// A route that waits for a condition queues a job only for the messages
// admitted while it holds; those are processed as before.
func TestAConditionalRouteQueuesOnlyWhileItsConditionHolds(t *testing.T) {
	t.Parallel()
	h := &failing{}
	b := setup(t, inbound.Route{Name: "activate", Kind: inbound.AnyKind, Handler: h, When: inbound.IfActivationPending})
	src, key := b.swSource(t)
	quiet := b.accept(t, key, src.ID, "m1", `{}`)
	rec, _ := b.mem.Message(quiet)
	require.Equal(t, inbound.StateDone, rec.State)
	require.Empty(t, b.mem.Jobs())

	b.mem.PendingFunc = func(id uuid.UUID) bool { return id == src.ID }
	wanted := b.accept(t, key, src.ID, "m2", `{}`)
	rec, _ = b.mem.Message(wanted)
	require.Equal(t, inbound.StateReceived, rec.State)
	jobs := b.mem.Jobs()
	require.Len(t, jobs, 1)
	require.Equal(t, wanted, jobs[0].MessageID)
	out := b.process(t, wanted, inbound.Job{ID: jobs[0].ID, Attempt: 1, MaxAttempts: 5})
	require.Equal(t, inbound.OutcomeDone, out.Kind)
	require.Equal(t, 1, out.Handlers)
	require.EqualValues(t, 1, h.runs.Load())
}

func TestProcessorRetriesOnTheSeedSchedule(t *testing.T) {
	t.Parallel()
	h := &failing{resultFunc: func(inbound.Message) error { return errors.New("supplier API down") }}
	b := setup(t, inbound.Route{Name: "double", Kind: inbound.AnyKind, Handler: h})
	src, key := b.swSource(t)
	id := b.accept(t, key, src.ID, "m1", `{}`)

	var delays []time.Duration
	for attempt := 1; attempt <= 4; attempt++ {
		out := b.process(t, id, inbound.Job{ID: 1, Attempt: attempt, MaxAttempts: 5})
		require.Equal(t, inbound.OutcomeRetry, out.Kind, "attempt %d", attempt)
		require.Equal(t, attempt, out.Attempt)
		require.Equal(t, b.clock.Now().Add(out.Delay), out.RetryAt)
		rec, _ := b.mem.Message(id)
		require.Equal(t, inbound.StateReceived, rec.State)
		require.Equal(t, attempt, rec.Attempts)
		require.Equal(t, out.RetryAt, rec.NextAttemptAt)
		require.Contains(t, rec.LastError, "supplier API down")
		delays = append(delays, out.Delay)
		b.clock.Advance(out.Delay)
	}
	require.Equal(t, []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second}, delays)

	out := b.process(t, id, inbound.Job{ID: 1, Attempt: 5, MaxAttempts: 5})
	require.Equal(t, inbound.OutcomeDead, out.Kind)
	rec, _ := b.mem.Message(id)
	require.Equal(t, inbound.StateDead, rec.State)
	require.Equal(t, 5, rec.Attempts)
	require.Equal(t, b.clock.Now(), rec.DeadAt)
	require.True(t, rec.NextAttemptAt.IsZero())
	require.EqualValues(t, 5, h.runs.Load())
}

func TestProcessorFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		result    func(inbound.Message) error
		job       inbound.Job
		wantKind  inbound.OutcomeKind
		wantDelay time.Duration
		wantError string
	}{
		{"permanent goes straight to the dead letters", func(inbound.Message) error { return inbound.Permanent(errors.New("unknown product")) },
			inbound.Job{Attempt: 1, MaxAttempts: 5}, inbound.OutcomeDead, 0, "unknown product"},
		{"a Retry-After hint wins", func(inbound.Message) error { return inbound.RetryAfter(errors.New("429"), 90*time.Second) },
			inbound.Job{Attempt: 1, MaxAttempts: 5}, inbound.OutcomeRetry, 90 * time.Second, "429"},
		{"a panic is a transient failure", func(inbound.Message) error { panic("nil map") },
			inbound.Job{Attempt: 1, MaxAttempts: 5}, inbound.OutcomeRetry, 5 * time.Second, "handler panicked: nil map"},
		{"River's last run is a dead letter whatever the policy says", func(inbound.Message) error { return errors.New("flaky") },
			inbound.Job{Attempt: 3, MaxAttempts: 3}, inbound.OutcomeDead, 0, "flaky"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := &failing{resultFunc: c.result}
			b := setup(t, inbound.Route{Name: "double", Kind: inbound.AnyKind, Handler: h})
			src, key := b.swSource(t)
			id := b.accept(t, key, src.ID, "m1", `{}`)
			out := b.process(t, id, c.job)
			require.Equal(t, c.wantKind, out.Kind)
			require.Equal(t, c.wantDelay, out.Delay)
			rec, _ := b.mem.Message(id)
			require.Contains(t, rec.LastError, c.wantError)
			require.Equal(t, 1, rec.Attempts, "a dead letter keeps the attempts it did not spend")
		})
	}
}

func TestProcessorCombinesHandlerFailures(t *testing.T) {
	t.Parallel()
	transient := &failing{resultFunc: func(inbound.Message) error { return errors.New("try later") }}
	permanent := &failing{resultFunc: func(inbound.Message) error { return inbound.Permanent(errors.New("never")) }}
	ok := &failing{}
	b := setup(t,
		inbound.Route{Name: "transient", Kind: inbound.AnyKind, Handler: transient},
		inbound.Route{Name: "permanent", Kind: inbound.AnyKind, Handler: permanent},
		inbound.Route{Name: "ok", Kind: inbound.AnyKind, Handler: ok},
	)
	src, key := b.swSource(t)
	id := b.accept(t, key, src.ID, "m1", `{}`)
	out := b.process(t, id, inbound.Job{Attempt: 1, MaxAttempts: 5})
	require.Equal(t, inbound.OutcomeDead, out.Kind)
	require.Equal(t, 3, out.Handlers)
	require.EqualValues(t, 1, ok.runs.Load(), "a failing handler does not keep the others from running")
	rec, _ := b.mem.Message(id)
	require.Contains(t, rec.LastError, "transient: try later")
	require.Contains(t, rec.LastError, "permanent: never")
}

func TestProcessorAbandonsACancelledRunWithoutSpendingTheAttempt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	h := &failing{resultFunc: func(inbound.Message) error { cancel(); return context.Canceled }}
	b := setup(t, inbound.Route{Name: "slow", Kind: inbound.AnyKind, Handler: h})
	src, key := b.swSource(t)
	id := b.accept(t, key, src.ID, "m1", `{}`)
	proc := inbound.NewProcessor(inbound.ProcessorDeps{Inbox: b.mem.States(), Router: mustRouter(t, inbound.Route{Name: "slow", Kind: inbound.AnyKind, Handler: h}), Clock: b.clock})

	out, err := proc.Process(ctx, id, inbound.Job{ID: 1, Attempt: 1, MaxAttempts: 5})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeAbandoned, out.Kind)
	rec, _ := b.mem.Message(id)
	require.Equal(t, inbound.StateReceived, rec.State)
	require.Equal(t, 0, rec.Attempts, "a cut-short run counts no attempt")

	// A timeout is the handler's own failure: it counts.
	waits := inbound.HandlerFunc(func(ctx context.Context, _ inbound.Message) error { <-ctx.Done(); return ctx.Err() })
	proc = inbound.NewProcessor(inbound.ProcessorDeps{Inbox: b.mem.States(), Router: mustRouter(t, inbound.Route{Name: "slow", Kind: inbound.AnyKind, Handler: waits}), Clock: b.clock})
	tctx, tcancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer tcancel()
	out, err = proc.Process(tctx, id, inbound.Job{ID: 2, Attempt: 1, MaxAttempts: 5})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeRetry, out.Kind)
	rec, _ = b.mem.Message(id)
	require.Equal(t, 1, rec.Attempts)
}

func TestProcessorSkipsAHandlerWhoseConditionIsFalse(t *testing.T) {
	t.Parallel()
	pending := &failing{}
	always := &failing{}
	b := setup(t,
		inbound.Route{Name: "pending-only", Kind: inbound.AnyKind, Handler: pending, When: inbound.IfActivationPending},
		inbound.Route{Name: "always", Kind: inbound.AnyKind, Handler: always})
	src, key := b.swSource(t)
	id := b.accept(t, key, src.ID, "m1", `{}`)
	out := b.process(t, id, inbound.Job{ID: 1, Attempt: 1, MaxAttempts: 5})
	require.Equal(t, inbound.OutcomeDone, out.Kind)
	require.Equal(t, 1, out.Handlers)
	require.Zero(t, pending.runs.Load(), "nothing pending: the conditional handler is skipped")
	require.EqualValues(t, 1, always.runs.Load())

	b.mem.PendingFunc = func(uuid.UUID) bool { return true }
	id = b.accept(t, key, src.ID, "m2", `{}`)
	out = b.process(t, id, inbound.Job{ID: 2, Attempt: 1, MaxAttempts: 5})
	require.Equal(t, 2, out.Handlers)
	require.EqualValues(t, 1, pending.runs.Load())
}

// wantsAll is a route that wants every message, so each accepted message
// queues its job.
func wantsAll() inbound.Route {
	return inbound.Route{Name: "all", Kind: inbound.AnyKind, Handler: inbound.HandlerFunc(func(context.Context, inbound.Message) error { return nil })}
}

func mustRouter(t *testing.T, routes ...inbound.Route) *inbound.Router {
	t.Helper()
	r, err := inbound.NewRouter(routes...)
	require.NoError(t, err)
	return r
}

func TestMessageStatusSaysWhatIsHappening(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var fail atomic.Pointer[error]
	h := &failing{resultFunc: func(inbound.Message) error {
		if e := fail.Load(); e != nil {
			return *e
		}
		return nil
	}}
	b := setup(t, inbound.Route{Name: "h", Kind: inbound.AnyKind, Handler: h})
	src, key := b.swSource(t)
	id := b.accept(t, key, src.ID, "m1", `{}`)
	status := func() (string, string) {
		t.Helper()
		m, err := b.svc.GetMessage(ctx, b.owner, inbound.MessageInput{ID: src.ID, MessageID: id})
		require.NoError(t, err)
		return m.Status, m.StatusDetail
	}
	s, d := status()
	require.Equal(t, inbound.StatusReceived, s)
	require.Equal(t, "waiting for its first attempt", d)

	transient := errors.New("supplier API 503")
	fail.Store(&transient)
	out := b.process(t, id, inbound.Job{ID: 1, Attempt: 1, MaxAttempts: 5})
	require.Equal(t, inbound.OutcomeRetry, out.Kind)
	s, d = status()
	require.Equal(t, inbound.StatusRetrying, s)
	require.Equal(t, "attempt 1 failed; retrying at "+out.RetryAt.UTC().Format(time.RFC3339), d)

	permanent := inbound.Permanent(errors.New("unknown order"))
	fail.Store(&permanent)
	require.Equal(t, inbound.OutcomeDead, b.process(t, id, inbound.Job{ID: 1, Attempt: 2, MaxAttempts: 5}).Kind)
	s, d = status()
	require.Equal(t, inbound.StatusDead, s)
	require.Contains(t, d, "after 2 attempt(s)")

	_, err := b.svc.ReplayDeadLetter(ctx, b.owner, inbound.ReplayDeadLetterInput{ID: src.ID, MessageID: id})
	require.NoError(t, err)
	fail.Store(nil)
	require.Equal(t, inbound.OutcomeDone, b.process(t, id, inbound.Job{ID: 2, Attempt: 1, MaxAttempts: 5}).Kind)
	s, d = status()
	require.Equal(t, inbound.StatusDone, s)
	require.Equal(t, "processed at "+b.clock.Now().UTC().Format(time.RFC3339), d)
}
