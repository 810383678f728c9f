package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.uber.org/zap"
)

// Relay defaults.
const (
	DefaultBatchSize    = 500
	DefaultPollInterval = time.Second
	DefaultMaxAttempts  = 5
)

// maxErrorLen bounds relay_error so a huge driver message cannot bloat a row.
const maxErrorLen = 2000

// RelayOptions configure a Relay. Zero values take the defaults.
type RelayOptions struct {
	// BatchSize is the most events claimed per fan-out transaction (500).
	BatchSize int
	// PollInterval is the fallback poll: a missed notification costs at most
	// this long (1s).
	PollInterval time.Duration
	// MaxAttempts is how many failed fan-outs poison an event (5).
	MaxAttempts int
	// RetryBackoff is how long the relay leaves an event alone after its
	// attempt-th failure; nil means attempt² seconds (1s, 4s, 9s, 16s), so the
	// attempts before poisoning span half a minute, not one burst. Tests
	// return 0.
	RetryBackoff func(attempt int) time.Duration
	// Logger defaults to a no-op logger.
	Logger *zap.Logger
	// Metrics may be nil.
	Metrics *Metrics
	// OnFanOut, when set, is called after each fan-out transaction commits
	// with the ids of the events it fanned out (tests and benchmarks time
	// commit-to-fan-out with it). It runs on the relay's goroutine: keep it
	// quick.
	OnFanOut func(eventIDs []uuid.UUID)
}

// Relay moves committed events to their subscribers' River queues. Several
// relays (one per server replica) may run against one database: claims take
// row locks with SKIP LOCKED and re-check fanned_out_at on the locked row,
// so no event is fanned out twice, and since a claim is "every un-fanned
// event", never "events after the last seq seen", an event whose
// transaction commits after a higher seq was claimed is still fanned out.
type Relay struct {
	pool   *pgxpool.Pool
	client *river.Client[pgx.Tx]
	routes routes
	opts   RelayOptions
	log    *zap.Logger

	byNotify atomic.Int64
	byPoll   atomic.Int64

	lagMu   sync.Mutex
	lagNext time.Time
}

// NewRelay returns a relay that inserts jobs with client for subs. client
// may be an insert-only client (no workers); when it has workers, River
// refuses a kind with none registered, which the relay treats as a failure of
// the events that need it.
func NewRelay(pool *pgxpool.Pool, client *river.Client[pgx.Tx], subs []Subscription, opts RelayOptions) (*Relay, error) {
	if pool == nil || client == nil {
		return nil, errors.New("new relay: pool and client are required")
	}
	rs, err := newRoutes(append([]Subscription(nil), subs...))
	if err != nil {
		return nil, fmt.Errorf("new relay: %w", err)
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.RetryBackoff == nil {
		opts.RetryBackoff = func(attempt int) time.Duration { return time.Duration(attempt*attempt) * time.Second }
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Relay{pool: pool, client: client, routes: rs, opts: opts, log: opts.Logger.Named("relay")}, nil
}

// Wakeups returns how often Run woke up because of a notification and
// because the poll timer fired. A test with a long poll interval asserts the
// notification path was taken with it.
func (r *Relay) Wakeups() (byNotify, byPoll int64) {
	return r.byNotify.Load(), r.byPoll.Load()
}

// Run fans events out until ctx is done, then returns nil. It LISTENs on
// Channel over a dedicated connection (reconnecting with backoff when it
// drops) and polls every PollInterval as a fallback; a notification is only a
// hint to look. Each wake-up drains: claims batches until one comes back
// short.
func (r *Relay) Run(ctx context.Context) error {
	wake := make(chan wakeCause, 1)
	var wg sync.WaitGroup
	wg.Go(func() { r.listen(ctx, wake) })
	defer wg.Wait()

	timer := time.NewTimer(r.opts.PollInterval)
	defer timer.Stop()
	cause := wakeStart
	// trail is the wait before the next trailing look (see below).
	trail := NotifySpacing
	for {
		switch cause {
		case wakeNotify:
			r.byNotify.Add(1)
		case wakePoll:
			r.byPoll.Add(1)
		}
		r.opts.Metrics.incWakeup(cause)
		if err := r.drain(ctx); err != nil && ctx.Err() == nil {
			// Most likely the database is unreachable: the next wake-up
			// or poll tries again.
			r.log.Warn("relay drain failed", zap.Error(err))
		}
		r.maybeRefreshLag(ctx)
		next, wait := wakePoll, r.opts.PollInterval
		switch cause {
		case wakeNotify, wakeStart:
			// A Recorder queues at most one wake-up per NotifySpacing:
			// look again once that has passed, for the events written
			// without one (after a start too: a wake-up queued before
			// LISTEN ran is lost).
			trail = NotifySpacing
			next, wait = wakeTrail, trail
		case wakeTrail:
			// An event written without a wake-up is visible only once its
			// transaction commits, which a busy database may put after the
			// first trailing look: the looks go on, each four times as far,
			// until the poll is nearer.
			if trail *= 4; trail < r.opts.PollInterval {
				next, wait = wakeTrail, trail
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case cause = <-wake:
		case <-timer.C:
			cause = next
		}
	}
}

// drain claims batches until one comes back short of BatchSize.
func (r *Relay) drain(ctx context.Context) error {
	for ctx.Err() == nil {
		n, err := r.FanOutOnce(ctx)
		if err != nil {
			return err
		}
		if n < r.opts.BatchSize {
			return nil
		}
	}
	return nil
}

// signal queues a wake-up without blocking; a pending one already covers it.
func signal(wake chan<- wakeCause, c wakeCause) {
	select {
	case wake <- c:
	default:
	}
}

// listen keeps a LISTEN connection open until ctx is done.
func (r *Relay) listen(ctx context.Context, wake chan<- wakeCause) {
	const minBackoff, maxBackoff = 100 * time.Millisecond, 30 * time.Second
	backoff := minBackoff
	for {
		connected, err := r.listenOnce(ctx, wake)
		if ctx.Err() != nil {
			return
		}
		if connected {
			backoff = minBackoff
		}
		r.log.Warn("relay listener lost its connection; polling meanwhile",
			zap.Error(err), zap.Duration("retry_in", backoff))
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// listenOnce listens on one connection until it fails. The connection is
// taken out of the pool for good (hijacked) so a LISTENing session never goes
// back to serve queries, and closed at the end.
func (r *Relay) listenOnce(ctx context.Context, wake chan<- wakeCause) (connected bool, err error) {
	pc, err := r.pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("acquire listener connection: %w", err)
	}
	conn := pc.Hijack()
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := conn.Close(closeCtx); err != nil {
			r.log.Warn("closing the listener connection failed", zap.Error(err))
		}
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+Channel); err != nil {
		return false, fmt.Errorf("listen %s: %w", Channel, err)
	}
	// Anything committed while nobody was listening is found by this drain.
	signal(wake, wakeStart)
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return true, fmt.Errorf("wait for notification: %w", err)
		}
		signal(wake, wakeNotify)
	}
}

// claimed is an event locked by a fan-out transaction.
type claimed struct {
	ID      uuid.UUID
	OwnerID uuid.UUID
	Type    string
	Delay   float64 // seconds since occurred_at
}

// fanoutEntry is one element of events.fanout.
type fanoutEntry struct {
	Subscriber string `json:"subscriber"`
	JobID      int64  `json:"job_id"`
}

// claimBatch locks un-fanned, un-poisoned events that are due, in seq order.
// seq only orders the claim: there is no cursor, so a lower seq that commits
// late is simply claimed later. Under READ COMMITTED PostgreSQL re-checks the
// WHERE clause on the locked row version, so a row another relay fanned out
// and committed meanwhile is dropped, not claimed twice.
const claimBatch = `SELECT id, owner_id, type, extract(epoch FROM clock_timestamp() - occurred_at)::float8
FROM events
WHERE fanned_out_at IS NULL AND poisoned_at IS NULL
  AND (relay_retry_at IS NULL OR relay_retry_at <= now())
ORDER BY seq
LIMIT $1
FOR UPDATE SKIP LOCKED`

// claimOne locks one event for the one-by-one path.
const claimOne = `SELECT id, owner_id, type, extract(epoch FROM clock_timestamp() - occurred_at)::float8
FROM events
WHERE id = $1 AND fanned_out_at IS NULL AND poisoned_at IS NULL
FOR UPDATE SKIP LOCKED`

const markFannedOut = `UPDATE events e
SET fanned_out_at = clock_timestamp(), fanout = v.fanout, relay_retry_at = NULL
FROM unnest($1::uuid[], $2::jsonb[]) AS v(id, fanout)
WHERE e.id = v.id`

// markFailed counts a failure against an event and poisons it at the limit.
const markFailed = `UPDATE events
SET relay_attempts = relay_attempts + 1,
    relay_error = $2,
    relay_retry_at = clock_timestamp() + make_interval(secs => $3::float8),
    poisoned_at = CASE WHEN relay_attempts + 1 >= $4 THEN clock_timestamp() END
WHERE id = $1
RETURNING relay_attempts, poisoned_at IS NOT NULL`

// FanOutOnce claims one batch and fans it out, and returns how many events
// it claimed (each either fanned out or counted as failed). When the batch
// transaction fails it is rolled back and its events are retried one by one,
// each in its own transaction, so one bad event cannot hold back the others;
// an event whose own fan-out fails gets a relay attempt counted against it
// and is poisoned at MaxAttempts. Run calls it in a loop; tests call it
// directly.
func (r *Relay) FanOutOnce(ctx context.Context) (int, error) {
	evs, batchErr := r.fanOutBatch(ctx)
	if batchErr == nil {
		return len(evs), nil
	}
	if len(evs) == 0 || ctx.Err() != nil {
		return 0, batchErr
	}
	r.log.Warn("relay batch failed; fanning its events out one by one",
		zap.Int("events", len(evs)), zap.Error(batchErr))
	for _, ev := range evs {
		if err := r.fanOutOne(ctx, ev.ID); err != nil {
			return len(evs), err
		}
	}
	return len(evs), nil
}

// fanOutBatch runs one batch transaction. On failure it returns the events it
// had claimed (now unlocked again) with the error.
func (r *Relay) fanOutBatch(ctx context.Context) (evs []claimed, err error) {
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin fan-out: %w", err)
	}
	defer func() {
		if err != nil {
			if rbErr := tx.Rollback(context.WithoutCancel(ctx)); rbErr != nil {
				err = errors.Join(err, fmt.Errorf("roll back fan-out: %w", rbErr))
			}
		}
	}()
	rows, err := tx.Query(ctx, claimBatch, r.opts.BatchSize)
	if err != nil {
		return nil, fmt.Errorf("claim events: %w", err)
	}
	evs, err = pgx.CollectRows(rows, pgx.RowToStructByPos[claimed])
	if err != nil {
		return nil, fmt.Errorf("claim events: %w", err)
	}
	if len(evs) == 0 {
		return nil, tx.Commit(ctx)
	}
	if err := r.insertAndMark(ctx, tx, evs); err != nil {
		return evs, err
	}
	if err := tx.Commit(ctx); err != nil {
		return evs, fmt.Errorf("commit fan-out: %w", err)
	}
	r.fannedOut(evs)
	r.opts.Metrics.observeBatch(len(evs))
	return evs, nil
}

// fanOutOne fans one event out in its own transaction; a failure of the
// event's own inserts is rolled back to a savepoint and counted against the
// event while its row lock is still held.
func (r *Relay) fanOutOne(ctx context.Context, id uuid.UUID) (err error) {
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin fan-out of %s: %w", id, err)
	}
	defer func() {
		// After Commit, Rollback reports only that the transaction is closed.
		if rbErr := tx.Rollback(context.WithoutCancel(ctx)); rbErr != nil && !errors.Is(rbErr, pgx.ErrTxClosed) {
			err = errors.Join(err, fmt.Errorf("roll back fan-out of %s: %w", id, rbErr))
		}
	}()
	rows, err := tx.Query(ctx, claimOne, id)
	if err != nil {
		return fmt.Errorf("claim event %s: %w", id, err)
	}
	evs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[claimed])
	if err != nil {
		return fmt.Errorf("claim event %s: %w", id, err)
	}
	if len(evs) == 0 {
		return nil // another relay has it, or has done it
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return fmt.Errorf("savepoint for %s: %w", id, err)
	}
	fanErr := r.insertAndMark(ctx, sp, evs)
	if fanErr == nil {
		if err := sp.Commit(ctx); err != nil {
			return fmt.Errorf("release savepoint for %s: %w", id, err)
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("commit fan-out of %s: %w", id, err)
		}
		r.fannedOut(evs)
		r.opts.Metrics.observeBatch(1)
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err() // shutting down is not the event's fault
	}
	if err := sp.Rollback(ctx); err != nil {
		return fmt.Errorf("roll back fan-out of %s: %w (after %w)", id, err, fanErr)
	}
	var (
		attempts int
		poisoned bool
	)
	msg := fanErr.Error()
	if len(msg) > maxErrorLen {
		msg = msg[:maxErrorLen]
	}
	if err := tx.QueryRow(ctx, `SELECT relay_attempts FROM events WHERE id = $1`, id).Scan(&attempts); err != nil {
		return fmt.Errorf("read attempts of %s: %w", id, err)
	}
	backoff := r.opts.RetryBackoff(attempts + 1)
	if err := tx.QueryRow(ctx, markFailed, id, msg, backoff.Seconds(), r.opts.MaxAttempts).Scan(&attempts, &poisoned); err != nil {
		return fmt.Errorf("count failure of %s: %w (after %w)", id, err, fanErr)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit failure of %s: %w (after %w)", id, err, fanErr)
	}
	r.opts.Metrics.incFailure(poisoned)
	fields := []zap.Field{
		zap.Stringer("event_id", id), zap.String("event_type", evs[0].Type),
		zap.Int("relay_attempts", attempts), zap.Error(fanErr),
	}
	if poisoned {
		r.log.Error("event poisoned: fan-out failed too often; release it once fixed", fields...)
	} else {
		r.log.Warn("event fan-out failed; will retry", append(fields, zap.Duration("retry_in", backoff))...)
	}
	return nil
}

// insertAndMark inserts one job per matching subscription per event (of an
// owner the subscription has work for) and marks the events fanned out,
// all in tx.
func (r *Relay) insertAndMark(ctx context.Context, tx pgx.Tx, evs []claimed) error {
	wanted, err := r.routes.ownersWanted(ctx, tx, evs)
	if err != nil {
		return err
	}
	var params []river.InsertManyParams
	for _, ev := range evs {
		for _, s := range r.routes[ev.Type] {
			if w, ok := wanted[s]; ok && !w[ev.OwnerID] {
				continue
			}
			params = append(params, river.InsertManyParams{
				Args:       fanoutArgs{kind: s.Kind, EventJobArgs: EventJobArgs{EventID: ev.ID}},
				InsertOpts: s.InsertOpts,
			})
		}
	}
	fanouts := make(map[uuid.UUID][]fanoutEntry, len(evs))
	if len(params) > 0 {
		res, err := r.client.InsertManyTx(ctx, tx, params)
		if err != nil {
			return fmt.Errorf("insert jobs: %w", err)
		}
		if err := collectFanout(res, fanouts); err != nil {
			return err
		}
	}
	ids := make([]uuid.UUID, len(evs))
	docs := make([][]byte, len(evs))
	for i, ev := range evs {
		entries := fanouts[ev.ID]
		if entries == nil {
			entries = []fanoutEntry{}
		}
		doc, err := json.Marshal(entries)
		if err != nil {
			return fmt.Errorf("encode fanout: %w", err)
		}
		ids[i], docs[i] = ev.ID, doc
	}
	tag, err := tx.Exec(ctx, markFannedOut, ids, docs)
	if err != nil {
		return fmt.Errorf("mark fanned out: %w", err)
	}
	if tag.RowsAffected() != int64(len(evs)) {
		return fmt.Errorf("mark fanned out: %d of %d rows", tag.RowsAffected(), len(evs))
	}
	return nil
}

// ownersWanted asks each subscription with an Owners query, once, which
// owners of the batch's events routed to it it has work for.
func (rs routes) ownersWanted(ctx context.Context, tx pgx.Tx, evs []claimed) (map[*Subscription]map[uuid.UUID]bool, error) {
	var asked map[*Subscription]map[uuid.UUID]bool
	for _, ev := range evs {
		for _, s := range rs[ev.Type] {
			if s.Owners == "" {
				continue
			}
			if asked == nil {
				asked = map[*Subscription]map[uuid.UUID]bool{}
			}
			if asked[s] == nil {
				asked[s] = map[uuid.UUID]bool{}
			}
			asked[s][ev.OwnerID] = true
		}
	}
	out := make(map[*Subscription]map[uuid.UUID]bool, len(asked))
	for s, set := range asked {
		owners := make([]uuid.UUID, 0, len(set))
		for o := range set {
			owners = append(owners, o)
		}
		rows, err := tx.Query(ctx, string(s.Owners), owners)
		if err != nil {
			return nil, fmt.Errorf("owners %s has work for: %w", s.Kind, err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		if err != nil {
			return nil, fmt.Errorf("owners %s has work for: %w", s.Kind, err)
		}
		out[s] = make(map[uuid.UUID]bool, len(ids))
		for _, id := range ids {
			out[s][id] = true
		}
	}
	return out, nil
}

// collectFanout maps inserted jobs back to their events by the event id in
// their args (no reliance on the order of the insert's results).
func collectFanout(res []*rivertype.JobInsertResult, into map[uuid.UUID][]fanoutEntry) error {
	for _, jr := range res {
		if jr == nil || jr.Job == nil {
			return errors.New("insert jobs: empty result")
		}
		var a EventJobArgs
		if err := json.Unmarshal(jr.Job.EncodedArgs, &a); err != nil {
			return fmt.Errorf("decode inserted job %d: %w", jr.Job.ID, err)
		}
		into[a.EventID] = append(into[a.EventID], fanoutEntry{Subscriber: jr.Job.Kind, JobID: jr.Job.ID})
	}
	return nil
}

// fannedOut reports committed events to the metrics and the hook.
func (r *Relay) fannedOut(evs []claimed) {
	for _, ev := range evs {
		r.opts.Metrics.incFannedOut(ev.Type)
		r.opts.Metrics.observeDelay(ev.Delay)
	}
	if r.opts.OnFanOut != nil {
		ids := make([]uuid.UUID, len(evs))
		for i, ev := range evs {
			ids[i] = ev.ID
		}
		r.opts.OnFanOut(ids)
	}
	if ce := r.log.Check(zap.DebugLevel, "events fanned out"); ce != nil {
		ce.Write(zap.Int("events", len(evs)))
	}
}

// lagQuery reads the relay's backlog: the age of the oldest due-or-not
// un-fanned event in claim order (an index probe), how many there are, and
// how many are poisoned. Both counts walk partial indexes that only hold the
// backlog, so they stay cheap while the relay keeps up.
const lagQuery = `SELECT
  coalesce(extract(epoch FROM clock_timestamp() - (
    SELECT occurred_at FROM events
    WHERE fanned_out_at IS NULL AND poisoned_at IS NULL ORDER BY seq LIMIT 1)), 0)::float8,
  (SELECT count(*) FROM events WHERE fanned_out_at IS NULL AND poisoned_at IS NULL),
  (SELECT count(*) FROM events WHERE poisoned_at IS NOT NULL)`

// maybeRefreshLag updates the lag gauges at most once per second.
func (r *Relay) maybeRefreshLag(ctx context.Context) {
	if r.opts.Metrics == nil || ctx.Err() != nil {
		return
	}
	r.lagMu.Lock()
	now := time.Now()
	due := !now.Before(r.lagNext)
	if due {
		r.lagNext = now.Add(time.Second)
	}
	r.lagMu.Unlock()
	if due {
		if err := r.RefreshLag(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("relay lag query failed", zap.Error(err))
		}
	}
}

// RefreshLag sets the lag and poisoned gauges from the database now.
func (r *Relay) RefreshLag(ctx context.Context) error {
	var (
		seconds        float64
		rows, poisoned int64
	)
	if err := r.pool.QueryRow(ctx, lagQuery).Scan(&seconds, &rows, &poisoned); err != nil {
		return fmt.Errorf("read relay lag: %w", err)
	}
	r.opts.Metrics.setLag(max(seconds, 0), rows, poisoned)
	return nil
}
