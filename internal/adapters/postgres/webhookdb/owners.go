package webhookdb

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// OwnersWithEndpoints tells, among owners, those with an endpoint that is
// not deleted (enabled or not): the owners whose events webhook.fanout has
// work for. An owner without one gets nothing from a fan-out, neither a
// delivery nor a summary (Store.Endpoints lists exactly these endpoints),
// so the relay queues no fan-out job for its events. It reads in tx, the
// relay's batch transaction, and has the events.OwnersFunc shape.
func OwnersWithEndpoints(ctx context.Context, tx pgx.Tx, owners []uuid.UUID) (map[uuid.UUID]bool, error) {
	rows, err := tx.Query(ctx, `SELECT DISTINCT owner_id FROM webhook_endpoints WHERE owner_id = ANY($1) AND deleted_at IS NULL`, owners)
	if err != nil {
		return nil, fmt.Errorf("owners with webhook endpoints: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("owners with webhook endpoints: %w", err)
	}
	out := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}
