package webhooks

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/adapters/riverjobs"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhooks"
)

// RecorderFunc binds the event Recorder to a transaction
// (events.Recorder.With).
type RecorderFunc func(tx pgx.Tx) domain.Recorder

// UnitOfWork implements webhooks.UnitOfWork over a pgx transaction.
type UnitOfWork struct {
	pool     *pgxpool.Pool
	recorder RecorderFunc
	river    *riverjobs.Inserter
}

var _ webhooks.UnitOfWork = (*UnitOfWork)(nil)

// NewUnitOfWork returns a UnitOfWork; river (an insert-only client) queues
// and re-queues deliveries inside the transaction.
func NewUnitOfWork(pool *pgxpool.Pool, recorder RecorderFunc, river *riverjobs.Inserter) *UnitOfWork {
	return &UnitOfWork{pool: pool, recorder: recorder, river: river}
}

// Do runs fn in one transaction, committed when fn returns nil. fn's error
// is returned as is (domain errors keep their kind).
func (u *UnitOfWork) Do(ctx context.Context, fn func(tx webhooks.Tx) error) error {
	return pgx.BeginFunc(ctx, u.pool, func(tx pgx.Tx) error {
		return fn(&txn{tx: tx, uow: u})
	})
}

type txn struct {
	tx  pgx.Tx
	uow *UnitOfWork
}

func (t *txn) Endpoints() webhooks.EndpointStore { return &endpointStore{tx: t.tx} }
func (t *txn) Deliveries() webhooks.DeliveryStore {
	return &deliveryStore{tx: t.tx, river: t.uow.river}
}
func (t *txn) Recorder() domain.Recorder { return t.uow.recorder(t.tx) }

// deliveryStore implements webhooks.DeliveryStore over River's job table.
type deliveryStore struct {
	tx    pgx.Tx
	river *riverjobs.Inserter
}

var _ webhooks.DeliveryStore = (*deliveryStore)(nil)

func (s *deliveryStore) Enqueue(ctx context.Context, endpointID, eventID uuid.UUID) (int64, error) {
	res, err := s.river.InsertTx(ctx, s.tx, riverjobs.WebhookDeliverArgs{EndpointID: endpointID, EventID: eventID}, nil)
	if err != nil {
		return 0, fmt.Errorf("queue delivery: %w", err)
	}
	return res.Job.ID, nil
}

// endpointJobs selects an endpoint's delivery jobs through River's GIN
// index on args.
const endpointJobs = `j.kind = 'webhook.deliver' AND j.args @> jsonb_build_object('endpoint_id', $1::text)`

func (s *deliveryStore) List(ctx context.Context, endpointID uuid.UUID, before int64, limit int) ([]webhooks.Delivery, error) {
	rows, err := s.tx.Query(ctx, `SELECT j.id, (j.args->>'event_id')::uuid, COALESCE(ev.type, ''), j.state::text,
  j.attempt, j.max_attempts, j.errors[array_upper(j.errors, 1)]->>'error', j.attempted_at, j.created_at,
  j.scheduled_at, a.status_code, a.latency_ms, a.response, a.location,
  COALESCE((j.metadata->>'snoozes')::int, 0)
FROM river_job j
LEFT JOIN events ev ON ev.id = (j.args->>'event_id')::uuid
LEFT JOIN LATERAL (
  SELECT status_code, latency_ms, response, location FROM webhook_attempts
  WHERE job_id = j.id ORDER BY id DESC LIMIT 1) a ON true
WHERE `+endpointJobs+` AND ($2::bigint = 0 OR j.id < $2)
ORDER BY j.id DESC
LIMIT $3`, endpointID, before, limit)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	defer rows.Close()
	var out []webhooks.Delivery
	for rows.Next() {
		var d webhooks.Delivery
		if err := rows.Scan(&d.JobID, &d.EventID, &d.EventType, &d.State, &d.Attempt, &d.MaxAttempts, &d.LastError,
			&d.AttemptedAt, &d.CreatedAt, &d.ScheduledAt, &d.StatusCode, &d.LatencyMS, &d.Response, &d.Location,
			&d.Snoozes); err != nil {
			return nil, fmt.Errorf("list deliveries: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return out, nil
}

// ListByEvent reads the event's delivery jobs through River's GIN index on
// args, each joined to its endpoint of ownerID (deleted ones included) and
// its last attempt; the event must be ownerID's.
func (s *deliveryStore) ListByEvent(ctx context.Context, ownerID, eventID uuid.UUID, limit int) ([]webhooks.EventDelivery, error) {
	var exists bool
	if err := s.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE id = $1 AND owner_id = $2)`, eventID, ownerID).
		Scan(&exists); err != nil {
		return nil, fmt.Errorf("find event %s: %w", eventID, err)
	}
	if !exists {
		return nil, domain.NotFound("NOT_FOUND", "event not found")
	}
	rows, err := s.tx.Query(ctx, `SELECT j.id, (j.args->>'event_id')::uuid, COALESCE(ev.type, ''), j.state::text,
  j.attempt, j.max_attempts, j.errors[array_upper(j.errors, 1)]->>'error', j.attempted_at, j.created_at,
  j.scheduled_at, a.status_code, a.latency_ms, a.response, a.location,
  COALESCE((j.metadata->>'snoozes')::int, 0), e.id, e.url,
  CASE WHEN e.deleted_at IS NOT NULL THEN 'deleted' WHEN NOT e.enabled THEN 'disabled'
       WHEN e.failing_since IS NOT NULL THEN 'failing' ELSE 'enabled' END
FROM river_job j
JOIN webhook_endpoints e ON e.id = (j.args->>'endpoint_id')::uuid AND e.owner_id = $2
LEFT JOIN events ev ON ev.id = (j.args->>'event_id')::uuid
LEFT JOIN LATERAL (
  SELECT status_code, latency_ms, response, location FROM webhook_attempts
  WHERE job_id = j.id ORDER BY id DESC LIMIT 1) a ON true
WHERE j.kind = 'webhook.deliver' AND j.args @> jsonb_build_object('event_id', $1::text)
ORDER BY j.id
LIMIT $3`, eventID, ownerID, limit)
	if err != nil {
		return nil, fmt.Errorf("list deliveries of event %s: %w", eventID, err)
	}
	defer rows.Close()
	var out []webhooks.EventDelivery
	for rows.Next() {
		var d webhooks.EventDelivery
		if err := rows.Scan(&d.JobID, &d.EventID, &d.EventType, &d.State, &d.Attempt, &d.MaxAttempts, &d.LastError,
			&d.AttemptedAt, &d.CreatedAt, &d.ScheduledAt, &d.StatusCode, &d.LatencyMS, &d.Response, &d.Location,
			&d.Snoozes, &d.EndpointID, &d.EndpointURL, &d.EndpointState); err != nil {
			return nil, fmt.Errorf("list deliveries of event %s: %w", eventID, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list deliveries of event %s: %w", eventID, err)
	}
	return out, nil
}

// Redeliver retries, with River's JobRetry, every discarded or cancelled
// delivery of the endpoint whose (endpoint, event) has no other live or
// completed job: such a sibling would either collide with River's unique
// index or mean the event was delivered already (one job per pair is taken
// when several were discarded). A retried job keeps its id, its errors and
// its webhook-id; it becomes available now, and when it had spent all its
// attempts River grants it one more. JobRetry locks the row and leaves an
// already available job alone, so two concurrent redelivers queue each job
// once.
func (s *deliveryStore) Redeliver(ctx context.Context, endpointID uuid.UUID) (int, error) {
	rows, err := s.tx.Query(ctx, `SELECT DISTINCT ON (j.unique_key) j.id FROM river_job j
WHERE `+endpointJobs+` AND j.state IN ('discarded', 'cancelled')
  AND NOT EXISTS (
    SELECT 1 FROM river_job k
    WHERE k.unique_key = j.unique_key AND k.id <> j.id AND k.unique_states IS NOT NULL
      AND river_job_state_in_bitmask(k.unique_states, k.state))
ORDER BY j.unique_key, j.id DESC`, endpointID)
	if err != nil {
		return 0, fmt.Errorf("find discarded deliveries: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, fmt.Errorf("find discarded deliveries: %w", err)
	}
	for _, id := range ids {
		if _, err := s.river.JobRetryTx(ctx, s.tx, id); err != nil {
			return 0, fmt.Errorf("retry delivery job %d: %w", id, err)
		}
	}
	return len(ids), nil
}
