package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/riverjobs"
	"github.com/standmeet/standmeet/internal/owner/subscriber"
)

// LeaseChannel is the NOTIFY channel on which a released lease slot is
// announced ("<endpoint id> <replica token>"), so deliveries waiting for
// that endpoint in other replicas try at once.
const LeaseChannel = "standmeet_webhook_lease"

// Store is the storage of webhook.fanout and webhook.deliver.
type Store struct {
	pool  *pgxpool.Pool
	river *riverjobs.Inserter
	// replica tells this process's NOTIFYs from other replicas'.
	replica string
}

var (
	_ subscriber.FanoutStore  = (*Store)(nil)
	_ subscriber.DeliverStore = (*Store)(nil)
)

// NewStore returns a Store; river (an insert-only client) inserts the
// deliveries.
func NewStore(pool *pgxpool.Pool, river *riverjobs.Inserter) *Store {
	return &Store{pool: pool, river: river, replica: uuid.NewString()}
}

// Event loads an event; subscriber.ErrGone when retention pruned it.
func (s *Store) Event(ctx context.Context, id uuid.UUID) (subscriber.Event, error) {
	var ev subscriber.Event
	err := s.pool.QueryRow(ctx, `SELECT id, owner_id, type, subject, occurred_at, data FROM events WHERE id = $1`, id).
		Scan(&ev.ID, &ev.OwnerID, &ev.Type, &ev.Subject, &ev.OccurredAt, &ev.Data)
	if errors.Is(err, pgx.ErrNoRows) {
		return ev, fmt.Errorf("event %s: %w", id, subscriber.ErrGone)
	}
	if err != nil {
		return ev, fmt.Errorf("read event %s: %w", id, err)
	}
	return ev, nil
}

// EnabledEndpoints lists the owner's enabled endpoints, without secrets.
func (s *Store) EnabledEndpoints(ctx context.Context, ownerID uuid.UUID) ([]subscriber.Endpoint, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, owner_id, url, event_types, embed_id, max_in_flight, enabled, failing_since
FROM webhook_endpoints WHERE owner_id = $1 AND enabled`, ownerID)
	if err != nil {
		return nil, fmt.Errorf("list enabled endpoints: %w", err)
	}
	defer rows.Close()
	var out []subscriber.Endpoint
	for rows.Next() {
		var (
			e   subscriber.Endpoint
			mif int16
		)
		if err := rows.Scan(&e.ID, &e.OwnerID, &e.URL, &e.EventTypes, &e.EmbedID, &mif, &e.Enabled, &e.FailingSince); err != nil {
			return nil, fmt.Errorf("list enabled endpoints: %w", err)
		}
		e.MaxInFlight = int(mif)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list enabled endpoints: %w", err)
	}
	return out, nil
}

// Enqueue inserts the deliveries in one transaction; River skips those
// whose (endpoint, event) job exists already.
func (s *Store) Enqueue(ctx context.Context, ds []subscriber.Delivery) ([]subscriber.Enqueued, error) {
	params := make([]river.InsertManyParams, len(ds))
	for i, d := range ds {
		p := river.InsertManyParams{Args: riverjobs.WebhookDeliverArgs{EndpointID: d.EndpointID, EventID: d.EventID}}
		if !d.ScheduledAt.IsZero() {
			p.InsertOpts = &river.InsertOpts{ScheduledAt: d.ScheduledAt}
		}
		params[i] = p
	}
	var out []subscriber.Enqueued
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		res, err := s.river.InsertManyTx(ctx, tx, params)
		if err != nil {
			return err
		}
		out = make([]subscriber.Enqueued, len(res))
		for i, r := range res {
			out[i] = subscriber.Enqueued{JobID: r.Job.ID, Duplicate: r.UniqueSkippedAsDuplicate}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("queue %d deliveries: %w", len(ds), err)
	}
	return out, nil
}

// deliverEndpointColumns are the columns of webhook_endpoints (alias e) that
// scanDeliverEndpoint reads, in its order.
const deliverEndpointColumns = `e.id, e.owner_id, e.url, e.event_types, e.embed_id, e.headers, e.max_in_flight, e.enabled,
  e.failing_since, e.secret_enc, e.prev_secret_enc, e.prev_secret_until`

// scanDeliverEndpoint scans deliverEndpointColumns into ep, then the
// row's remaining columns into extra.
func scanDeliverEndpoint(row pgx.Row, ep *subscriber.Endpoint, extra ...any) error {
	var (
		headers []byte
		mif     int16
	)
	dest := append([]any{&ep.ID, &ep.OwnerID, &ep.URL, &ep.EventTypes, &ep.EmbedID, &headers, &mif, &ep.Enabled,
		&ep.FailingSince, &ep.SecretSealed, &ep.PrevSecretSealed, &ep.PrevSecretUntil}, extra...)
	if err := row.Scan(dest...); err != nil {
		return err
	}
	ep.MaxInFlight = int(mif)
	if err := json.Unmarshal(headers, &ep.Headers); err != nil {
		return fmt.Errorf("decode headers of endpoint %s: %w", ep.ID, err)
	}
	return nil
}

// takeLease reads the endpoint and the event and takes the endpoint's
// first free slot among the first max_in_flight, in one statement: the
// slot is locked with SKIP LOCKED (a concurrent taker moves on to another
// slot or finds none), and PostgreSQL re-checks busy_until on the locked
// row, so two takers never hold one slot. No lease is taken for a disabled
// endpoint or a pruned event.
const takeLease = `WITH ep AS (
  SELECT ` + deliverEndpointColumns + `
  FROM webhook_endpoints e WHERE e.id = $1
), ev AS (
  SELECT id, owner_id, type, subject, occurred_at, data FROM events WHERE id = $4
), free AS (
  SELECT l.endpoint_id, l.slot
  FROM webhook_endpoint_leases l JOIN ep ON ep.id = l.endpoint_id
  WHERE l.endpoint_id = $1 AND ep.enabled AND l.slot < ep.max_in_flight AND l.busy_until < now()
    AND EXISTS (SELECT 1 FROM ev)
  ORDER BY l.slot
  LIMIT 1
  FOR UPDATE OF l SKIP LOCKED
), taken AS (
  UPDATE webhook_endpoint_leases l
  SET busy_until = now() + make_interval(secs => $3::float8), holder = $2, taken_at = now()
  FROM free WHERE l.endpoint_id = free.endpoint_id AND l.slot = free.slot
  RETURNING l.slot
)
SELECT ep.*, (SELECT slot FROM taken),
       ev.id, ev.owner_id, ev.type, ev.subject, ev.occurred_at, ev.data
FROM ep LEFT JOIN ev ON true`

// TakeLease implements subscriber.DeliverStore.
func (s *Store) TakeLease(ctx context.Context, endpointID, eventID, token uuid.UUID, ttl time.Duration) (subscriber.Claim, error) {
	var (
		c       subscriber.Claim
		slot    *int16
		evID    *uuid.UUID
		ev      subscriber.Event
		evOwner *uuid.UUID
		evType  *string
		evSubj  *string
		evAt    *time.Time
	)
	err := scanDeliverEndpoint(s.pool.QueryRow(ctx, takeLease, endpointID, token, ttl.Seconds(), eventID), &c.Endpoint,
		&slot, &evID, &evOwner, &evType, &evSubj, &evAt, &ev.Data)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("endpoint %s: %w", endpointID, subscriber.ErrGone)
	}
	if err != nil {
		return c, fmt.Errorf("take lease of endpoint %s: %w", endpointID, err)
	}
	if evID != nil {
		ev.ID, ev.OwnerID, ev.Type, ev.Subject, ev.OccurredAt = *evID, *evOwner, *evType, *evSubj, *evAt
		c.Event = &ev
	}
	if slot != nil {
		c.Lease = &subscriber.Lease{EndpointID: endpointID, Slot: int(*slot), Token: token}
	}
	return c, nil
}

// renewLease extends a held slot and reads the endpoint in one statement.
const renewLease = `WITH ep AS (
  SELECT ` + deliverEndpointColumns + `
  FROM webhook_endpoints e WHERE e.id = $1
), renewed AS (
  UPDATE webhook_endpoint_leases l SET busy_until = now() + make_interval(secs => $4::float8)
  FROM ep
  WHERE l.endpoint_id = $1 AND l.slot = $2 AND l.holder = $3 AND ep.enabled AND l.slot < ep.max_in_flight
  RETURNING 1
)
SELECT ep.*, EXISTS (SELECT 1 FROM renewed) FROM ep`

// RenewLease implements subscriber.DeliverStore.
func (s *Store) RenewLease(ctx context.Context, l subscriber.Lease, ttl time.Duration) (subscriber.Endpoint, bool, error) {
	var (
		ep   subscriber.Endpoint
		held bool
	)
	row := s.pool.QueryRow(ctx, renewLease, l.EndpointID, l.Slot, l.Token, ttl.Seconds())
	err := scanDeliverEndpoint(row, &ep, &held)
	if errors.Is(err, pgx.ErrNoRows) {
		return ep, false, fmt.Errorf("endpoint %s: %w", l.EndpointID, subscriber.ErrGone)
	}
	if err != nil {
		return ep, false, fmt.Errorf("renew lease of endpoint %s: %w", l.EndpointID, err)
	}
	return ep, held, nil
}

// Finish implements subscriber.DeliverStore: the attempt, the settlement,
// the release and its NOTIFY go as one batch, which PostgreSQL runs as one
// implicit transaction in one round trip.
func (s *Store) Finish(ctx context.Context, f subscriber.Finish) (subscriber.Settled, error) {
	var (
		b        pgx.Batch
		settled  subscriber.Settled
		endpoint uuid.UUID
	)
	if a := f.Attempt; a != nil {
		endpoint = a.EndpointID
		b.Queue(`INSERT INTO webhook_attempts (job_id, endpoint_id, event_id, attempt, outcome, status_code, latency_ms,
  response, error, location, attempted_at)
SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, COALESCE($11::timestamptz, now())
WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $2)`,
			a.JobID, a.EndpointID, a.EventID, a.Attempt, string(a.Outcome), nullInt(a.StatusCode),
			latencyMS(a), nullString(a.Response), nullString(a.Error), nullString(a.Location), timePtr(a.At))
	}
	if l := f.Lease; l != nil {
		endpoint = l.EndpointID
	}
	switch f.Settle {
	case subscriber.SettleSuccess:
		b.Queue(`UPDATE webhook_endpoints SET failing_since = NULL, updated_at = $2::timestamptz
WHERE id = $1 AND failing_since IS NOT NULL`, endpoint, f.Now)
	case subscriber.SettleFailure:
		// Written only when something changes: the first failure, or the
		// one that finds the endpoint failing for DisableAfter.
		b.Queue(`UPDATE webhook_endpoints SET
  failing_since = COALESCE(failing_since, $2::timestamptz),
  enabled = failing_since IS NULL OR failing_since > $2::timestamptz - make_interval(secs => $3::float8),
  disabled_reason = CASE WHEN failing_since <= $2::timestamptz - make_interval(secs => $3::float8) THEN $4 END,
  updated_at = $2::timestamptz
WHERE id = $1 AND enabled AND (failing_since IS NULL OR failing_since <= $2::timestamptz - make_interval(secs => $3::float8))
RETURNING NOT enabled`, endpoint, f.Now, f.DisableAfter.Seconds(), f.DisableReason).
			QueryRow(func(row pgx.Row) error {
				err := row.Scan(&settled.Disabled)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil
				}
				return err
			})
	}
	if l := f.Lease; l != nil && f.HandTo != uuid.Nil {
		// The pass is the take's conditions without the wait: the slot
		// stays busy, under the new holder's token, and the new holder
		// gets the endpoint as it is now.
		b.Queue(`UPDATE webhook_endpoint_leases l
SET holder = $4, busy_until = now() + make_interval(secs => $5::float8), taken_at = now()
FROM webhook_endpoints e
WHERE l.endpoint_id = $1 AND l.slot = $2 AND l.holder = $3
  AND e.id = l.endpoint_id AND e.enabled AND l.slot < e.max_in_flight
RETURNING `+deliverEndpointColumns, l.EndpointID, l.Slot, l.Token, f.HandTo, f.HandTTL.Seconds()).
			QueryRow(func(row pgx.Row) error {
				var ep subscriber.Endpoint
				err := scanDeliverEndpoint(row, &ep)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil
				}
				if err != nil {
					return err
				}
				settled.HandedOver = &ep
				return nil
			})
	}
	if l := f.Lease; l != nil {
		// After a pass the holder is no longer ours, so this changes
		// nothing.
		b.Queue(`UPDATE webhook_endpoint_leases SET busy_until = '-infinity', holder = NULL
WHERE endpoint_id = $1 AND slot = $2 AND holder = $3`, l.EndpointID, l.Slot, l.Token)
		if f.Announce {
			b.Queue(`SELECT pg_notify('`+LeaseChannel+`', $1)`, l.EndpointID.String()+" "+s.replica)
		}
	}
	if b.Len() == 0 {
		return settled, nil
	}
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return settled, fmt.Errorf("finish delivery to endpoint %s: %w", endpoint, err)
	}
	return settled, nil
}

// wakeDeliveries makes parked deliveries available now, as River's own
// scheduler does when their time comes, and tells River's producers of the
// webhooks queue to fetch (River's insert notification), so they need not
// wait for their next poll. What moves:
//
//   - a scheduled delivery already due: exactly what River's scheduler would
//     do next, done now. The chain does not wait for the scheduler, whose
//     query can take tens of seconds on a river_job table that grew faster
//     than autovacuum analyses it (measured: a 5,000-job burst on a fresh
//     database timed it out for a minute, and every parked delivery with
//     it);
//   - an available or scheduled delivery due later, unless its last run
//     was snoozed by the receiver (429 or 503 with Retry-After, recorded in
//     the delivery log): that wait is the receiver's, and no other replica's
//     stale parking list may cut it short.
//
// Retryable deliveries never move: their wait is the retry schedule.
//
// Rows are locked in id order with SKIP LOCKED, so the wake never waits on
// River's scheduler or completer, which lock the same rows in their own
// order (an UPDATE that locked them as it met them deadlocked with both).
// It returns the ids of those still running — their snooze is not
// recorded yet (River's completer writes it a moment after the worker
// returns) — and of those skipped as locked, so the caller asks again
// later.
const wakeDeliveries = `WITH target AS (
  SELECT id, state FROM river_job WHERE id = ANY($1) AND kind = 'webhook.deliver'
), candidate AS (
  SELECT j.id FROM river_job j
  WHERE j.id = ANY($1) AND j.kind = 'webhook.deliver' AND (
    (j.state = 'scheduled' AND j.scheduled_at <= now())
    OR (j.state IN ('available', 'scheduled') AND j.scheduled_at > now()
        AND (SELECT a.outcome FROM webhook_attempts a WHERE a.job_id = j.id ORDER BY a.id DESC LIMIT 1)
            IS DISTINCT FROM 'snoozed'))
), due AS (
  SELECT j.id FROM river_job j JOIN candidate c ON c.id = j.id
  WHERE j.state IN ('available', 'scheduled')
  ORDER BY j.id
  FOR UPDATE OF j SKIP LOCKED
), woke AS (
  UPDATE river_job j SET state = 'available', scheduled_at = now()
  FROM due WHERE j.id = due.id
  RETURNING j.id, j.queue
), notified AS (
  SELECT pg_notify('river_insert', json_build_object('queue', min(queue))::text) FROM woke HAVING count(*) > 0
)
SELECT COALESCE(array_agg(id) FILTER (WHERE state = 'running'
         OR (id IN (SELECT id FROM candidate) AND id NOT IN (SELECT id FROM woke))), '{}'),
       (SELECT count(*) FROM notified)
FROM target`

// WakeDeliveries implements subscriber.DeliverStore.
func (s *Store) WakeDeliveries(ctx context.Context, jobIDs []int64) ([]int64, error) {
	var (
		running  []int64
		notified int
	)
	if err := s.pool.QueryRow(ctx, wakeDeliveries, jobIDs).Scan(&running, &notified); err != nil {
		return nil, fmt.Errorf("wake %d deliveries: %w", len(jobIDs), err)
	}
	return running, nil
}

func nullInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func latencyMS(a *subscriber.Attempt) *int64 {
	if a.Latency <= 0 && a.StatusCode == 0 {
		return nil
	}
	ms := a.Latency.Milliseconds()
	return &ms
}

// PruneAttempts deletes delivery-log rows recorded before before, in
// batches, and returns how many.
func (s *Store) PruneAttempts(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		tag, err := s.pool.Exec(ctx, `DELETE FROM webhook_attempts WHERE id IN (
  SELECT id FROM webhook_attempts WHERE attempted_at < $1 LIMIT 1000)`, before)
		if err != nil {
			return total, fmt.Errorf("prune delivery log: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < 1000 {
			return total, nil
		}
	}
}

// LeaseListener hears lease releases of other replicas and wakes the
// deliveries waiting for those endpoints here. It is a background loop of
// the server.
type LeaseListener struct {
	store  *Store
	flow   *subscriber.Flow
	logger *zap.Logger
}

// NewLeaseListener returns a listener that wakes flow's waiters for every
// release announced by another replica.
func NewLeaseListener(store *Store, flow *subscriber.Flow, logger *zap.Logger) *LeaseListener {
	if logger == nil {
		logger = zap.NewNop()
	}
	return &LeaseListener{store: store, flow: flow, logger: logger}
}

// Flow returns the flow control the listener wakes (its stats tell how a
// burst went).
func (l *LeaseListener) Flow() *subscriber.Flow { return l.flow }

// Run listens until ctx is done, reconnecting with backoff; a missed
// notification only costs a waiter its recheck interval.
func (l *LeaseListener) Run(ctx context.Context) error {
	backoff := 100 * time.Millisecond
	for {
		err := l.listenOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		l.logger.Warn("webhook lease listener lost its connection", zap.Error(err), zap.Duration("retry_in", backoff))
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func (l *LeaseListener) listenOnce(ctx context.Context) error {
	pc, err := l.store.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire listener connection: %w", err)
	}
	// A LISTENing session never goes back to the pool.
	conn := pc.Hijack()
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+LeaseChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		id, replica, ok := strings.Cut(n.Payload, " ")
		if !ok || replica == l.store.replica {
			continue
		}
		if epID, err := uuid.Parse(id); err == nil {
			l.flow.Wake(epID)
		}
	}
}
