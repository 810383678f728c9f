package riverjob_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/inbounddb"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
	"github.com/standmeet/standmeet/internal/testdb"
)

// frozenClock is a test clock: it moves only when the test says. It starts
// at the real time so River accepts the retry times it leads to (River
// falls back to its own policy for a time in the past).
type frozenClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *frozenClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *frozenClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// plainBox "seals" by binding the associated data, which is all the
// pipeline relies on here.
func seal(p, ad []byte) ([]byte, error) { return append(append([]byte{}, ad...), p...), nil }
func unseal(s, ad []byte) ([]byte, error) {
	if !bytes.HasPrefix(s, ad) {
		return nil, errors.New("wrong associated data")
	}
	return s[len(ad):], nil
}

// resultHandler is the handler test double: it answers what resultFunc says
// and counts its runs.
type resultHandler struct {
	runs       atomic.Int64
	mu         sync.Mutex
	resultFunc func() error
}

func (h *resultHandler) set(f func() error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.resultFunc = f
}

func (h *resultHandler) HandleInbound(context.Context, inbound.Message) error {
	h.runs.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.resultFunc == nil {
		return nil
	}
	return h.resultFunc()
}

type testBundle struct {
	pool    *pgxpool.Pool
	stop    func() error
	clock   *frozenClock
	handler *resultHandler
	svc     *inbound.Service
	gw      *inbound.Gateway
	owner   uuid.UUID
	events  <-chan *river.Event
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	pool := testdb.New(t)
	clock := &frozenClock{now: time.Now().UTC().Truncate(time.Second)}
	handler := &resultHandler{}
	ins, err := riverjob.NewInserter(pool, 0, nil)
	require.NoError(t, err)
	uow := inbounddb.New(pool, riverjob.NewInboundJobs(ins).With)
	reg := verifier.NewDefaultRegistry()
	router, err := inbound.NewRouter(inbound.Route{Name: "double", Kind: inbound.AnyKind, Handler: handler})
	require.NoError(t, err)
	proc := inbound.NewProcessor(inbound.ProcessorDeps{Inbox: uow.States(), Router: router, Clock: clock})
	cache := inbound.NewSourceCache(0)
	svc := inbound.NewService(inbound.ServiceDeps{UoW: uow, Verifiers: reg, Seal: seal, Clock: clock, Cache: cache})

	workers := river.NewWorkers()
	require.NoError(t, riverjob.RegisterInbound(workers,
		riverjob.NewInboundProcessWorker(proc, nil), riverjob.NewInboundPurgeWorker(svc.Maintain, nil)))
	w, err := riverjob.NewWorker(pool, riverjob.Config{MaxWorkers: 10, FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond}, workers, nil, nil)
	require.NoError(t, err)
	events, cancel := w.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	t.Cleanup(cancel)
	require.NoError(t, w.Start(ctx))
	stop := sync.OnceValue(func() error { return w.Shutdown(10 * time.Second) })
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Logf("stop the River worker: %v", err)
		}
	})

	owner := uuid.New()
	_, err = pool.Exec(ctx, `INSERT INTO owners (id, email, password_hash, created_at, updated_at) VALUES ($1, $2, 'x', now(), now())`, owner, owner.String()+"@example.test")
	require.NoError(t, err)
	return &testBundle{
		pool: pool, stop: stop, clock: clock, handler: handler, svc: svc, owner: owner, events: events,
		gw: inbound.NewGateway(inbound.GatewayDeps{Sources: uow, Inbox: uow, Cache: cache, Verifiers: reg, Unseal: unseal, Clock: clock}),
	}
}

// receive creates a source and accepts one message through the gateway.
func (b *testBundle) receive(t *testing.T) (sourceID, messageID uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	src, err := b.svc.CreateSource(ctx, b.owner, inbound.CreateSourceInput{Name: "s", Verifier: verifier.KindStandardWebhooks})
	require.NoError(t, err)
	key, err := standardwebhooks.ParseSecret(src.Secret)
	require.NoError(t, err)
	now, body := b.clock.Now(), `{"type":"thing.happened"}`
	h := domain.Header{}
	h.Set(standardwebhooks.HeaderID, "msg_1")
	h.Set(standardwebhooks.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(standardwebhooks.HeaderSignature, standardwebhooks.Sign(key, "msg_1", now, []byte(body)))
	r, err := b.gw.Receive(ctx, src.ID, inbound.Request{Headers: h, Body: strings.NewReader(body), ContentLength: int64(len(body))})
	require.NoError(t, err)
	require.Equal(t, inbound.Accepted, r.Status)
	return src.ID, r.ID
}

// next waits for River's next event about a processing job.
func (b *testBundle) next(t *testing.T) *river.Event {
	t.Helper()
	for {
		select {
		case ev := <-b.events:
			if ev.Job.Kind == riverjob.InboundProcessKind {
				return ev
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no River event within 20s")
		}
	}
}

type row struct {
	state         string
	attempts      int
	lastError     string
	lastAttemptAt time.Time
	nextAttemptAt *time.Time
	jobID         int64
}

func (b *testBundle) row(t *testing.T, id uuid.UUID) row {
	t.Helper()
	var r row
	var lastError *string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT state, attempts, last_error, last_attempt_at, next_attempt_at, job_id
		FROM inbound_messages WHERE id = $1`, id).Scan(&r.state, &r.attempts, &lastError, &r.lastAttemptAt, &r.nextAttemptAt, &r.jobID))
	if lastError != nil {
		r.lastError = *lastError
	}
	return r
}

// runNow makes a waiting job due at once instead of sleeping until its
// scheduled time (River's JobRetry).
func (b *testBundle) runNow(t *testing.T, jobID int64) {
	t.Helper()
	c, err := riverjob.NewInserter(b.pool, 0, nil)
	require.NoError(t, err)
	job, err := c.JobRetry(context.Background(), jobID)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateAvailable, job.State, "the job was waiting, not running or finished")
}

func TestTransientFailuresFollowTheSeedScheduleThenDeadLetter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.handler.set(func() error { return errors.New("supplier API 503") })
	sourceID, id := b.receive(t)

	var delays []time.Duration
	for attempt := 1; attempt <= 4; attempt++ {
		ev := b.next(t)
		require.Equal(t, river.EventKindJobFailed, ev.Kind, "attempt %d", attempt)
		r := b.row(t, id)
		require.Equal(t, "received", r.state)
		require.Equal(t, attempt, r.attempts)
		require.Contains(t, r.lastError, "supplier API 503")
		require.NotNil(t, r.nextAttemptAt)
		delays = append(delays, r.nextAttemptAt.Sub(r.lastAttemptAt))

		job, err := riverJob(b.pool, ev.Job.ID)
		require.NoError(t, err)
		require.Equal(t, attempt, job.Attempt)
		require.WithinDuration(t, *r.nextAttemptAt, job.ScheduledAt, time.Microsecond, "River schedules the retry the policy chose")
		require.Contains(t, job.Errors[len(job.Errors)-1].Error, "supplier API 503")

		b.clock.Set(*r.nextAttemptAt) // the retry happens when it was due
		b.runNow(t, ev.Job.ID)
	}
	require.Equal(t, []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second}, delays)

	ev := b.next(t)
	require.Equal(t, river.EventKindJobCancelled, ev.Kind, "the fifth failure is a dead letter")
	r := b.row(t, id)
	require.Equal(t, "dead", r.state)
	require.Equal(t, 5, r.attempts)
	require.Nil(t, r.nextAttemptAt)
	require.EqualValues(t, 5, b.handler.runs.Load())

	page, err := b.svc.ListDeadLetters(context.Background(), b.owner, inbound.ListDeadLettersInput{ID: sourceID})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	require.Equal(t, id, page.Data[0].ID)

	// The bug is fixed: replay brings the message back and it completes.
	b.handler.set(nil)
	v, err := b.svc.ReplayDeadLetter(context.Background(), b.owner, inbound.ReplayDeadLetterInput{ID: sourceID, MessageID: id})
	require.NoError(t, err)
	require.Equal(t, inbound.StateReceived, v.State)
	require.Zero(t, v.Attempts)
	ev = b.next(t)
	require.Equal(t, river.EventKindJobCompleted, ev.Kind)
	require.NotEqual(t, r.jobID, ev.Job.ID, "a replay is a new job")
	require.Equal(t, 5, ev.Job.MaxAttempts)
	done := b.row(t, id)
	require.Equal(t, "done", done.state)
	require.Equal(t, 1, done.attempts)
	require.Empty(t, done.lastError)
	require.EqualValues(t, 6, b.handler.runs.Load())
}

func TestPermanentFailureIsDeadAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.handler.set(func() error { return inbound.Permanent(errors.New("unknown sku")) })
	sourceID, id := b.receive(t)

	ev := b.next(t)
	require.Equal(t, river.EventKindJobCancelled, ev.Kind)
	require.Equal(t, 1, ev.Job.Attempt, "no attempt spent beyond the first")
	require.Equal(t, rivertype.JobStateCancelled, ev.Job.State)
	r := b.row(t, id)
	require.Equal(t, "dead", r.state)
	require.Equal(t, 1, r.attempts)
	require.Contains(t, r.lastError, "unknown sku")

	// Replayed without resetting, it gets the 4 attempts it had left.
	b.handler.set(func() error { return errors.New("still failing") })
	f := false
	_, err := b.svc.ReplayDeadLetters(context.Background(), b.owner, inbound.ReplayDeadLettersInput{ID: sourceID, ResetAttempts: &f})
	require.NoError(t, err)
	ev = b.next(t)
	require.Equal(t, river.EventKindJobFailed, ev.Kind)
	require.Equal(t, 4, ev.Job.MaxAttempts)
	r = b.row(t, id)
	require.Equal(t, 2, r.attempts)
	require.Equal(t, 10*time.Second, r.nextAttemptAt.Sub(r.lastAttemptAt), "the schedule goes on from the message's attempts")
}

func TestRetryAfterHintWins(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.handler.set(func() error { return inbound.RetryAfter(errors.New("429"), 2*time.Minute) })
	_, id := b.receive(t)
	ev := b.next(t)
	require.Equal(t, river.EventKindJobFailed, ev.Kind)
	r := b.row(t, id)
	require.Equal(t, 2*time.Minute, r.nextAttemptAt.Sub(r.lastAttemptAt))
	job, err := riverJob(b.pool, ev.Job.ID)
	require.NoError(t, err)
	require.WithinDuration(t, *r.nextAttemptAt, job.ScheduledAt, time.Microsecond)
}

func TestPurgeWorkerRemovesExpiredReplayKeysAndOldProcessedMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	sourceID, _ := b.receive(t)
	_, err := b.pool.Exec(ctx, `INSERT INTO inbound_replays (source_id, message_id, payload_sha256, registered_at, expires_at)
		SELECT $1, 'old-' || g, sha256(g::text::bytea), now() - interval '2 hours', now() - interval '1 hour' FROM generate_series(1, 12000) g`, sourceID)
	require.NoError(t, err)
	// 6,000 messages processed 31 days ago (more than one batch), and one
	// of each kind that stays: processed 29 days ago, dead and never
	// processed for 40 days.
	_, err = b.pool.Exec(ctx, `INSERT INTO inbound_messages (id, owner_id, source_id, message_id, message_id_signed,
  payload_sha256, body, received_at, state, attempts, done_at, dead_at)
SELECT gen_random_uuid(), s.owner_id, s.id, 'm-' || g, true, sha256(g::text::bytea), '{}'::bytea,
  now() - interval '40 days',
  CASE WHEN g <= 6001 THEN 'done' WHEN g = 6002 THEN 'dead' ELSE 'received' END, 1,
  CASE WHEN g <= 6000 THEN now() - interval '31 days' WHEN g = 6001 THEN now() - interval '29 days' END,
  CASE WHEN g = 6002 THEN now() - interval '40 days' END
FROM inbound_sources s, generate_series(1, 6003) g WHERE s.id = $1`, sourceID)
	require.NoError(t, err)
	w := riverjob.NewInboundPurgeWorker(b.svc.Maintain, nil)
	b.clock.Set(time.Now())
	require.NoError(t, w.Work(ctx, &river.Job[riverjob.InboundPurgeArgs]{}))
	var left int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM inbound_replays WHERE source_id = $1`, sourceID).Scan(&left))
	require.Equal(t, 1, left, "only the live key of the accepted message is left")
	rows, err := b.pool.Query(ctx, `SELECT message_id FROM inbound_messages WHERE source_id = $1 AND message_id LIKE 'm-%' ORDER BY message_id`, sourceID)
	require.NoError(t, err)
	kept, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"m-6001", "m-6002", "m-6003"}, kept, "processed within the retention, dead, unprocessed")
	var accepted int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM inbound_messages WHERE source_id = $1 AND message_id NOT LIKE 'm-%'`, sourceID).Scan(&accepted))
	require.Equal(t, 1, accepted, "the message received just now stays")
}

func riverJob(pool *pgxpool.Pool, id int64) (*rivertype.JobRow, error) {
	c, err := riverjob.NewInserter(pool, 0, nil)
	if err != nil {
		return nil, err
	}
	return c.JobGet(context.Background(), id)
}

// blockingHandler blocks each run until its context ends, telling started
// when it begins; once released it succeeds at once.
type blockingHandler struct {
	started  chan struct{}
	released atomic.Bool
	runs     atomic.Int64
}

func (h *blockingHandler) HandleInbound(ctx context.Context, _ inbound.Message) error {
	h.runs.Add(1)
	if h.released.Load() {
		return nil
	}
	h.started <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

func TestShutdownDuringProcessingSpendsNoAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	h := &blockingHandler{started: make(chan struct{}, 1)}
	router, err := inbound.NewRouter(inbound.Route{Name: "blocking", Kind: inbound.AnyKind, Handler: h})
	require.NoError(t, err)
	ins, err := riverjob.NewInserter(b.pool, 0, nil)
	require.NoError(t, err)
	uow := inbounddb.New(b.pool, riverjob.NewInboundJobs(ins).With)
	proc := inbound.NewProcessor(inbound.ProcessorDeps{Inbox: uow.States(), Router: router})
	startWorker := func() *riverjob.Worker {
		workers := river.NewWorkers()
		require.NoError(t, riverjob.RegisterInbound(workers,
			riverjob.NewInboundProcessWorker(proc, nil), riverjob.NewInboundPurgeWorker(b.svc.Maintain, nil)))
		w, err := riverjob.NewWorker(b.pool, riverjob.Config{MaxWorkers: 4, FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond}, workers, nil, nil)
		require.NoError(t, err)
		require.NoError(t, w.Start(ctx))
		return w
	}
	// The bundle's own worker must not take the message: stop it first.
	require.NoError(t, b.stop())

	w1 := startWorker()
	_, id := b.receive(t)
	select {
	case <-h.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the handler never started")
	}
	require.Equal(t, "processing", b.row(t, id).state)
	// A shutdown that cannot wait for the handler cancels it.
	require.NoError(t, w1.Shutdown(100*time.Millisecond))

	r := b.row(t, id)
	require.Equal(t, "received", r.state, "the abandoned message is waiting again")
	require.Equal(t, 0, r.attempts, "the cut-short run spent no attempt of the inbox")
	job, err := riverJob(b.pool, r.jobID)
	require.NoError(t, err)
	require.Equal(t, rivertype.JobStateAvailable, job.State, "River has the job available again at once")
	require.Equal(t, 0, job.Attempt, "the cut-short run spent no River attempt")

	h.released.Store(true)
	w2 := startWorker()
	t.Cleanup(func() {
		if err := w2.Shutdown(10 * time.Second); err != nil {
			t.Logf("stop the second River worker: %v", err)
		}
	})
	require.Eventually(t, func() bool { return b.row(t, id).state == "done" }, 20*time.Second, 20*time.Millisecond,
		"the message is processed after the restart")
	r = b.row(t, id)
	require.Equal(t, 1, r.attempts, "the run after the restart is the first attempt")
	require.EqualValues(t, 2, h.runs.Load())
}
