package webhookdb

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// HealthReader implements webhook.HealthReader over the attempt records
// (webhook_attempts): the outcome of every run of a delivery.
type HealthReader struct {
	pool *pgxpool.Pool
}

var _ webhook.HealthReader = (*HealthReader)(nil)

// NewHealthReader returns a HealthReader reading through pool.
func NewHealthReader(pool *pgxpool.Pool) *HealthReader { return &HealthReader{pool: pool} }

// healthSQL reads a page of endpoints' outcomes in one statement. Each value
// is an index-only probe or range of webhook_attempts_endpoint_outcome_idx
// (endpoint, outcome, time): the latest success and failure whatever their
// age, and the day's attempts, without reading an endpoint's whole log. A
// run that waited for a busy endpoint (snoozed) is no attempt; a discarded
// run (a 4xx, a refused target) is a failure.
const healthSQL = `SELECT e.id,
  (SELECT max(a.attempted_at) FROM webhook_attempts a WHERE a.endpoint_id = e.id AND a.outcome = 'completed'),
  GREATEST(
    (SELECT max(a.attempted_at) FROM webhook_attempts a WHERE a.endpoint_id = e.id AND a.outcome = 'retryable'),
    (SELECT max(a.attempted_at) FROM webhook_attempts a WHERE a.endpoint_id = e.id AND a.outcome = 'discarded')),
  (SELECT coalesce(a.error, 'HTTP ' || a.status_code) FROM webhook_attempts a
   WHERE a.endpoint_id = e.id AND a.outcome IN ('retryable', 'discarded')
   ORDER BY a.attempted_at DESC, a.id DESC LIMIT 1),
  (SELECT count(*) FROM webhook_attempts a
   WHERE a.endpoint_id = e.id AND a.outcome IN ('completed', 'retryable', 'discarded') AND a.attempted_at >= $2),
  (SELECT count(*) FROM webhook_attempts a
   WHERE a.endpoint_id = e.id AND a.outcome = 'completed' AND a.attempted_at >= $2)
FROM unnest($1::uuid[]) AS e(id)`

// Health returns the health of each of ids, counting attempts since since.
func (r *HealthReader) Health(ctx context.Context, ids []uuid.UUID, since time.Time) (map[uuid.UUID]webhook.Health, error) {
	out := make(map[uuid.UUID]webhook.Health, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := r.pool.Query(ctx, healthSQL, ids, since)
	if err != nil {
		return nil, fmt.Errorf("read endpoint health: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id uuid.UUID
			h  webhook.Health
		)
		if err := rows.Scan(&id, &h.LastSuccessAt, &h.LastFailureAt, &h.LastFailure, &h.Attempts24h, &h.Succeeded24h); err != nil {
			return nil, fmt.Errorf("read endpoint health: %w", err)
		}
		if h.Attempts24h > 0 {
			rate := float64(h.Succeeded24h) / float64(h.Attempts24h)
			h.SuccessRate24h = &rate
		}
		out[id] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read endpoint health: %w", err)
	}
	return out, nil
}

// purgeBatch bounds the endpoints one purge statement removes (each takes
// its lease slots and attempt records with it).
const purgeBatch = 100

// PurgeDeletedEndpoints removes the endpoints deleted before before, with
// their lease slots and delivery log (ON DELETE CASCADE), in batches, and
// returns how many. The retention job calls it with the event retention's
// cutoff, so a deleted endpoint's history stays readable as long as its
// events.
func PurgeDeletedEndpoints(ctx context.Context, pool *pgxpool.Pool, before time.Time) (int64, error) {
	var total int64
	for {
		tag, err := pool.Exec(ctx, `DELETE FROM webhook_endpoints WHERE id IN (
  SELECT id FROM webhook_endpoints WHERE deleted_at < $1 ORDER BY deleted_at LIMIT $2)`, before, purgeBatch)
		if err != nil {
			return total, fmt.Errorf("purge deleted endpoints: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < purgeBatch {
			return total, nil
		}
	}
}

// healthChange is a health change the finishing statement reports for the
// run at index i of its batch: a webhook.HealthChangeKind.
type healthChange struct {
	i    int
	kind string
}

// RecordHealthWith makes the Store record the operational events of the
// health changes its finishing statements make (webhook.RecordHealth), with
// rec bound to the statement's transaction. Without it no event is
// recorded.
func (s *Store) RecordHealthWith(rec uow.Recorder) { s.healthRec = rec }

// finishSettling runs finish, the finishing statement of fs, and records
// the events of the health changes it reports, in one transaction. A batch
// in which no run settles its endpoint can change no endpoint's health:
// its statement runs alone, without a transaction (one round trip).
func (s *Store) finishSettling(ctx context.Context, fs []delivery.Finish, finish func(q pgxQuerier) ([]healthChange, error)) error {
	settles := false
	for _, f := range fs {
		settles = settles || f.Settle != delivery.SettleNone
	}
	if !settles || s.healthRec == nil {
		_, err := finish(s.statements)
		return err
	}
	return uow.New(s.statements, nil, func(tx pgx.Tx, _ domain.Recorder) pgx.Tx { return tx }).Do(ctx, func(tx pgx.Tx) error {
		changes, err := finish(tx)
		if err != nil || len(changes) == 0 {
			return err
		}
		return recordHealth(ctx, tx, s.healthRec(tx), fs, changes)
	})
}

// pgxQuerier runs a statement: the pool or a transaction.
type pgxQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// recordHealth reads the changed endpoints' owners and streaks (locked by
// the change in tx) and records their events.
func recordHealth(ctx context.Context, tx pgx.Tx, rec domain.Recorder, fs []delivery.Finish, changes []healthChange) error {
	ids := make([]uuid.UUID, len(changes))
	for k, c := range changes {
		ids[k] = fs[c.i].EndpointID
	}
	type row struct {
		owner uuid.UUID
		since *time.Time
	}
	rows, err := tx.Query(ctx, `SELECT id, owner_id, failing_since FROM webhook_endpoints WHERE id = ANY($1)`, ids)
	if err != nil {
		return fmt.Errorf("read changed endpoints: %w", err)
	}
	byID := map[uuid.UUID]row{}
	var (
		id uuid.UUID
		r  row
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &r.owner, &r.since}, func() error {
		byID[id] = r
		return nil
	}); err != nil {
		return fmt.Errorf("read changed endpoints: %w", err)
	}
	out := make([]webhook.HealthChange, 0, len(changes))
	for _, c := range changes {
		f := fs[c.i]
		ep, ok := byID[f.EndpointID]
		if !ok {
			continue
		}
		hc := webhook.HealthChange{Kind: webhook.HealthChangeKind(c.kind), EndpointID: f.EndpointID, OwnerID: ep.owner, At: f.Now, Reason: f.DisableReason}
		if ep.since != nil {
			hc.FailingSince = *ep.since
		}
		out = append(out, hc)
	}
	return webhook.RecordHealth(ctx, rec, out)
}

// statsSQL buckets the owner's attempts of a window. Each (endpoint,
// outcome that is an attempt) is one range of
// webhook_attempts_endpoint_outcome_idx (endpoint, outcome, time) INCLUDE
// (latency), read index-only and no further back than $3: the cost is the
// owner's attempts in the window, never another owner's (OFFSET 0 keeps
// the planner from turning the ranges into one scan of every owner's
// window). A snoozed run spent no attempt.
const statsSQL = `SELECT date_bin($5::interval, a.attempted_at, $3) AS at,
  count(*) FILTER (WHERE o.outcome = 'completed'),
  count(*) FILTER (WHERE o.outcome = 'retryable'),
  count(*) FILTER (WHERE o.outcome = 'discarded'),
  percentile_disc(0.5) WITHIN GROUP (ORDER BY a.latency_ms),
  percentile_disc(0.99) WITHIN GROUP (ORDER BY a.latency_ms)
FROM webhook_endpoints e
CROSS JOIN unnest('{completed,retryable,discarded}'::text[]) AS o(outcome)
CROSS JOIN LATERAL (
  SELECT a.attempted_at, a.latency_ms FROM webhook_attempts a
  WHERE a.endpoint_id = e.id AND a.outcome = o.outcome AND a.attempted_at >= $3 AND a.attempted_at < $4
  OFFSET 0) a
WHERE e.owner_id = $1 AND ($2::uuid IS NULL OR e.id = $2)
GROUP BY 1 ORDER BY 1`

// Stats implements webhook.StatsReader.
func (r *HealthReader) Stats(ctx context.Context, ownerID uuid.UUID, endpointID *uuid.UUID, since, until time.Time, step time.Duration) ([]webhook.StatsBucket, error) {
	rows, err := r.pool.Query(ctx, statsSQL, ownerID, endpointID, since, until, step)
	if err != nil {
		return nil, fmt.Errorf("read delivery stats: %w", err)
	}
	var (
		out      []webhook.StatsBucket
		b        webhook.StatsBucket
		p50, p99 *int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&b.At, &b.Succeeded, &b.Retrying, &b.GaveUp, &p50, &p99}, func() error {
		b.P50MS, b.P99MS = intPtr(p50), intPtr(p99)
		out = append(out, b)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read delivery stats: %w", err)
	}
	return out, nil
}

func intPtr(v *int64) *int {
	if v == nil {
		return nil
	}
	n := int(*v)
	return &n
}

// Troubled implements webhook.StatsReader: the owner's endpoints through
// webhook_endpoints_owner_idx, filtered.
func (r *HealthReader) Troubled(ctx context.Context, ownerID uuid.UUID) ([]webhook.Endpoint, error) {
	rows, err := r.pool.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
WHERE owner_id = $1 AND deleted_at IS NULL AND (failing_since IS NOT NULL OR NOT enabled)
ORDER BY failing_since NULLS LAST, id LIMIT 100`, ownerID)
	if err != nil {
		return nil, fmt.Errorf("read troubled endpoints: %w", err)
	}
	defer rows.Close()
	var out []webhook.Endpoint
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return nil, fmt.Errorf("read troubled endpoints: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read troubled endpoints: %w", err)
	}
	return out, nil
}
