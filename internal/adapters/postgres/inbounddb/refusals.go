package inbounddb

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/standmeet/standmeet/internal/owner/inbound"
)

var _ inbound.RefusalStore = (*UnitOfWork)(nil)

// AddRefusals inserts the refusals of sources that still exist and trims
// each of their sources to its inbound.RefusalsKept newest, in one
// transaction.
func (u *UnitOfWork) AddRefusals(ctx context.Context, rs []inbound.Refusal) error {
	n := len(rs)
	owners, sources, at := make([]uuid.UUID, n), make([]uuid.UUID, n), make([]time.Time, n)
	reasons, details := make([]string, n), make([]string, n)
	for i, r := range rs {
		owners[i], sources[i], at[i], reasons[i], details[i] = r.OwnerID, r.SourceID, r.At, r.Reason, r.Detail
	}
	return inTx(ctx, u.db, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO inbound_refusals (owner_id, source_id, refused_at, reason, detail)
			SELECT i.owner_id, i.source_id, i.at, i.reason, i.detail
			FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[], $5::text[]) WITH ORDINALITY AS i(owner_id, source_id, at, reason, detail, ord)
			JOIN inbound_sources s ON s.id = i.source_id AND s.owner_id = i.owner_id
			ORDER BY i.ord`,
			owners, sources, at, reasons, details)
		if err != nil {
			return fmt.Errorf("insert inbound refusals: %w", err)
		}
		_, err = tx.Exec(ctx, `DELETE FROM inbound_refusals r USING (
				SELECT src, (SELECT id FROM inbound_refusals WHERE source_id = src ORDER BY id DESC OFFSET $2 LIMIT 1) AS oldest_dropped
				FROM unnest($1::uuid[]) AS src GROUP BY src) k
			WHERE r.source_id = k.src AND r.id <= k.oldest_dropped`, sources, inbound.RefusalsKept)
		if err != nil {
			return fmt.Errorf("trim inbound refusals: %w", err)
		}
		return nil
	})
}

// ListRefusals returns the source's newest refusals.
func (u *UnitOfWork) ListRefusals(ctx context.Context, ownerID, sourceID uuid.UUID, limit int) ([]inbound.Refusal, error) {
	rows, err := u.db.Query(ctx, `SELECT owner_id, source_id, refused_at, reason, detail FROM inbound_refusals
		WHERE owner_id = $1 AND source_id = $2 ORDER BY id DESC LIMIT $3`, ownerID, sourceID, limit)
	if err != nil {
		return nil, fmt.Errorf("list inbound refusals: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (inbound.Refusal, error) {
		var x inbound.Refusal
		err := r.Scan(&x.OwnerID, &x.SourceID, &x.At, &x.Reason, &x.Detail)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("list inbound refusals: %w", err)
	}
	return out, nil
}

// PurgeRefusals deletes the refusals older than before.
func (u *UnitOfWork) PurgeRefusals(ctx context.Context, before time.Time) (int64, error) {
	tag, err := u.db.Exec(ctx, `DELETE FROM inbound_refusals WHERE refused_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("purge inbound refusals: %w", err)
	}
	return tag.RowsAffected(), nil
}
