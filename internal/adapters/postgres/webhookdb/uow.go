package webhookdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// NewUnitOfWork returns the webhook domain's unit of work over pool; its Tx
// records events with rec bound to the transaction, and river (an
// insert-only client) queues and re-queues deliveries inside it.
func NewUnitOfWork(pool *pgxpool.Pool, rec uow.Recorder, river *riverjob.Inserter) *uow.UnitOfWork[webhook.Tx] {
	return uow.New(pool, rec, func(tx pgx.Tx, rec domain.Recorder) webhook.Tx { return &txn{tx: tx, rec: rec, river: river} })
}

type txn struct {
	tx    pgx.Tx
	rec   domain.Recorder
	river *riverjob.Inserter
}

func (t *txn) Endpoints() webhook.EndpointStore  { return &endpointStore{tx: t.tx} }
func (t *txn) Deliveries() webhook.DeliveryStore { return &deliveryStore{tx: t.tx, river: t.river} }
func (t *txn) Recorder() domain.Recorder         { return t.rec }

// deliveryStore implements webhook.DeliveryStore over River's job table.
type deliveryStore struct {
	tx    pgx.Tx
	river *riverjob.Inserter
}

var _ webhook.DeliveryStore = (*deliveryStore)(nil)

func (s *deliveryStore) Enqueue(ctx context.Context, endpointID, eventID uuid.UUID) (int64, error) {
	res, err := s.river.InsertTx(ctx, s.tx, riverjob.WebhookDeliverArgs{EndpointID: endpointID, EventID: eventID}, nil)
	if err != nil {
		return 0, fmt.Errorf("queue delivery: %w", err)
	}
	return res.Job.ID, nil
}

func scanDelivery(row pgx.Row, d *webhook.Delivery, extra ...any) error {
	return row.Scan(append([]any{&d.JobID, &d.EventID, &d.EventType, &d.State, &d.FailedBefore, &d.Attempt, &d.MaxAttempts,
		&d.LastError, &d.AttemptedAt, &d.CreatedAt, &d.ScheduledAt, &d.StatusCode, &d.LatencyMS, &d.Response, &d.Location,
		&d.Snoozes}, extra...)...)
}

func (s *deliveryStore) List(ctx context.Context, endpointID uuid.UUID, q webhook.DeliveryQuery) ([]webhook.Delivery, error) {
	var cursor any = q.Before
	if q.After > 0 {
		cursor = q.After
	}
	rows, err := s.tx.Query(ctx, listDeliveries(q.Status, q.After > 0),
		endpointID, cursor, q.Limit, q.EventType, timePtr(q.Since), timePtr(q.Until))
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	out, err := pgx.AppendRows([]webhook.Delivery(nil), rows, func(row pgx.CollectableRow) (d webhook.Delivery, err error) {
		err = scanDelivery(row, &d)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return out, nil
}

// deliveryNotFound is what Get and Retry return for a delivery that is not
// the endpoint's.
func deliveryNotFound() error {
	return domain.NotFound(webhook.CodeDeliveryNotFound, "delivery not found")
}

// Get reads one delivery, its attempts and its event.
func (s *deliveryStore) Get(ctx context.Context, endpointID uuid.UUID, jobID int64) (webhook.Delivery, []webhook.Attempt, *webhook.LoggedEvent, error) {
	var (
		d  webhook.Delivery
		ev webhook.LoggedEvent
		id *uuid.UUID
	)
	err := scanDelivery(s.tx.QueryRow(ctx, getDelivery, endpointID, jobID), &d, &id, &ev.Subject, &ev.OccurredAt, &ev.Data)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, nil, nil, deliveryNotFound()
	}
	if err != nil {
		return d, nil, nil, fmt.Errorf("read delivery %d: %w", jobID, err)
	}
	rows, err := s.tx.Query(ctx, `SELECT attempt, outcome, status_code, latency_ms, response, error, location, attempted_at,
  webhook_timestamp, webhook_signature
FROM webhook_attempts WHERE job_id = $1 AND endpoint_id = $2 ORDER BY id`, jobID, endpointID)
	if err != nil {
		return d, nil, nil, fmt.Errorf("read attempts of delivery %d: %w", jobID, err)
	}
	var attempts []webhook.Attempt
	var a webhook.Attempt
	if _, err := pgx.ForEachRow(rows, []any{&a.Attempt, &a.Outcome, &a.StatusCode, &a.LatencyMS, &a.Response, &a.Error,
		&a.Location, &a.At, &a.Timestamp, &a.Signature}, func() error {
		attempts = append(attempts, a)
		return nil
	}); err != nil {
		return d, nil, nil, fmt.Errorf("read attempts of delivery %d: %w", jobID, err)
	}
	if id == nil {
		return d, attempts, nil, nil
	}
	ev.ID, ev.Type = *id, d.EventType
	return d, attempts, &ev, nil
}

// Retry retries one delivery with River's JobRetry under its row lock,
// read in the state the log shows (jobState), when that state is one of
// states.
func (s *deliveryStore) Retry(ctx context.Context, endpointID uuid.UUID, jobID int64, states []string) (string, string, error) {
	var state string
	err := s.tx.QueryRow(ctx, retryState, endpointID, jobID).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", deliveryNotFound()
	}
	if err != nil {
		return "", "", fmt.Errorf("read delivery %d: %w", jobID, err)
	}
	if !slices.Contains(states, state) {
		return state, "", nil
	}
	job, err := s.river.JobRetryTx(ctx, s.tx, jobID)
	if err != nil {
		return "", "", fmt.Errorf("retry delivery job %d: %w", jobID, err)
	}
	return state, string(job.State), nil
}

// RangeEvents reads the range's events of the types, oldest first, at most
// max+1 (through events_owner_type_occurred_idx).
func (s *deliveryStore) RangeEvents(ctx context.Context, ownerID uuid.UUID, types []string, since, until time.Time, max int) ([]delivery.Event, error) {
	rows, err := s.tx.Query(ctx, `SELECT ev.id, ev.owner_id, ev.type, ev.subject, ev.occurred_at, ev.data FROM events ev
WHERE ev.owner_id = $1 AND ev.occurred_at >= $2 AND ev.occurred_at < $3 AND ev.type = ANY($4)
ORDER BY ev.occurred_at, ev.seq LIMIT $5`, ownerID, since, until, types, max+1)
	if err != nil {
		return nil, fmt.Errorf("read events to recover: %w", err)
	}
	evs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[delivery.Event])
	if err != nil {
		return nil, fmt.Errorf("read events to recover: %w", err)
	}
	return evs, nil
}

// QueueRecovered queues each event's delivery available, on the
// endpoint's lane (lanesOf) when one is alive. River's unique options skip
// an event the endpoint has a delivery of.
func (s *deliveryStore) QueueRecovered(ctx context.Context, endpointID uuid.UUID, eventIDs []uuid.UUID) (int, error) {
	if len(eventIDs) == 0 {
		return 0, nil
	}
	lane, err := lanes(ctx, s.tx, []uuid.UUID{endpointID})
	if err != nil {
		return 0, err
	}
	var opts *river.InsertOpts
	if q := lane[endpointID]; q != "" {
		opts = &river.InsertOpts{Queue: q}
	}
	params := make([]river.InsertManyParams, len(eventIDs))
	for i, id := range eventIDs {
		params[i] = river.InsertManyParams{Args: riverjob.WebhookDeliverArgs{EndpointID: endpointID, EventID: id}, InsertOpts: opts}
	}
	res, err := s.river.InsertManyTx(ctx, s.tx, params)
	if err != nil {
		return 0, fmt.Errorf("queue recovered deliveries: %w", err)
	}
	queued := 0
	for _, r := range res {
		if !r.UniqueSkippedAsDuplicate {
			queued++
		}
	}
	return queued, nil
}

// ListByEvent reads the event's delivery jobs through River's GIN index on
// args, each joined to its endpoint of ownerID (deleted ones included) and
// its last attempt; the event must be ownerID's.
func (s *deliveryStore) ListByEvent(ctx context.Context, ownerID, eventID uuid.UUID, limit int) ([]webhook.EventDelivery, error) {
	var exists bool
	if err := s.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE id = $1 AND owner_id = $2)`, eventID, ownerID).
		Scan(&exists); err != nil {
		return nil, fmt.Errorf("find event %s: %w", eventID, err)
	}
	if !exists {
		return nil, domain.NotFound("NOT_FOUND", "event not found")
	}
	rows, err := s.tx.Query(ctx, listByEvent, eventID, ownerID, limit)
	if err != nil {
		return nil, fmt.Errorf("list deliveries of event %s: %w", eventID, err)
	}
	out, err := scanEventDeliveries(rows)
	if err != nil {
		return nil, fmt.Errorf("list deliveries of event %s: %w", eventID, err)
	}
	return out, nil
}

func scanEventDeliveries(rows pgx.Rows) ([]webhook.EventDelivery, error) {
	return pgx.AppendRows([]webhook.EventDelivery(nil), rows, func(row pgx.CollectableRow) (d webhook.EventDelivery, err error) {
		err = scanDelivery(row, &d.Delivery, &d.EndpointID, &d.EndpointURL, &d.EndpointState)
		return d, err
	})
}

// LatestByEvents reads, in one statement, the latest job of each (event,
// endpoint of ownerID), one probe of River's GIN index on args per event.
func (s *deliveryStore) LatestByEvents(ctx context.Context, ownerID uuid.UUID, eventIDs []uuid.UUID) ([]webhook.EventDelivery, error) {
	if len(eventIDs) == 0 {
		return nil, nil
	}
	rows, err := s.tx.Query(ctx, latestByEvents, eventIDs, ownerID)
	if err != nil {
		return nil, fmt.Errorf("read the deliveries of %d events: %w", len(eventIDs), err)
	}
	out, err := scanEventDeliveries(rows)
	if err != nil {
		return nil, fmt.Errorf("read the deliveries of %d events: %w", len(eventIDs), err)
	}
	return out, nil
}

// Failed reads the endpoint's discarded or cancelled deliveries, one per
// (endpoint, event) and none whose pair has a live or completed job (its
// retry would collide with River's unique index, or the event was
// delivered), each with its event when the retention kept it.
func (s *deliveryStore) Failed(ctx context.Context, endpointID uuid.UUID) ([]webhook.FailedDelivery, error) {
	rows, err := s.tx.Query(ctx, failedDeliveries, endpointID)
	if err != nil {
		return nil, fmt.Errorf("find failed deliveries: %w", err)
	}
	out, err := pgx.AppendRows([]webhook.FailedDelivery(nil), rows, func(row pgx.CollectableRow) (f webhook.FailedDelivery, err error) {
		var (
			id, ownerID  *uuid.UUID
			typ, subject *string
			at           *time.Time
			data         []byte
		)
		if err = row.Scan(&f.JobID, &f.State, &id, &ownerID, &typ, &subject, &at, &data); err == nil && id != nil {
			f.Event = &delivery.Event{ID: *id, OwnerID: *ownerID, Type: *typ, Subject: *subject, OccurredAt: *at, Data: data}
		}
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("find failed deliveries: %w", err)
	}
	return out, nil
}

// Requeue makes each job available now with River's JobRetry, keeping its
// id, errors and webhook-id (River grants a job that spent its attempts one
// more). JobRetry locks the row and leaves an available job alone, so two
// concurrent redelivers queue each job once.
func (s *deliveryStore) Requeue(ctx context.Context, endpointID uuid.UUID, jobIDs []int64) error {
	for _, id := range jobIDs {
		if _, err := s.river.JobRetryTx(ctx, s.tx, id); err != nil {
			return fmt.Errorf("retry delivery job %d of endpoint %s: %w", id, endpointID, err)
		}
	}
	return nil
}
