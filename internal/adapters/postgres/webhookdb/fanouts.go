package webhookdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// FanoutReader implements webhook.FanoutReader over webhook_fanouts.
type FanoutReader struct {
	pool *pgxpool.Pool
}

var _ webhook.FanoutReader = (*FanoutReader)(nil)

// NewFanoutReader returns a FanoutReader reading through pool.
func NewFanoutReader(pool *pgxpool.Pool) *FanoutReader { return &FanoutReader{pool: pool} }

// eventSummary reads the owner's event and its summary (NULL when none);
// no row when the event is not the owner's.
const eventSummary = `SELECT f.reasons, f.recorded_at FROM events ev
LEFT JOIN webhook_fanouts f ON f.event_id = ev.id
WHERE ev.id = $1 AND ev.owner_id = $2`

// EventSummary implements webhook.FanoutReader: the summary, then the
// owner's endpoints it names, in two statements.
func (r *FanoutReader) EventSummary(ctx context.Context, ownerID, eventID uuid.UUID) (*webhook.Summary, map[uuid.UUID]webhook.FanoutEndpoint, error) {
	var (
		raw []byte
		at  *time.Time
	)
	err := r.pool.QueryRow(ctx, eventSummary, eventID, ownerID).Scan(&raw, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, domain.NotFound("NOT_FOUND", "event not found")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read fan-out summary of event %s: %w", eventID, err)
	}
	if raw == nil {
		return nil, nil, nil
	}
	var sum webhook.Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		return nil, nil, fmt.Errorf("decode fan-out summary of event %s: %w", eventID, err)
	}
	if at != nil {
		sum.RecordedAt = *at
	}
	var ids []uuid.UUID
	for _, l := range sum.Reasons {
		ids = append(ids, l...)
	}
	rows, err := r.pool.Query(ctx, `SELECT id, url,
  CASE WHEN deleted_at IS NOT NULL THEN 'deleted' WHEN NOT enabled THEN 'disabled'
       WHEN failing_since IS NOT NULL THEN 'failing' ELSE 'enabled' END
FROM webhook_endpoints WHERE id = ANY($1) AND owner_id = $2`, ids, ownerID)
	if err != nil {
		return nil, nil, fmt.Errorf("read endpoints of the fan-out of event %s: %w", eventID, err)
	}
	eps := map[uuid.UUID]webhook.FanoutEndpoint{}
	var ep webhook.FanoutEndpoint
	if _, err := pgx.ForEachRow(rows, []any{&ep.ID, &ep.URL, &ep.State}, func() error {
		eps[ep.ID] = ep
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("read endpoints of the fan-out of event %s: %w", eventID, err)
	}
	return &sum, eps, nil
}
