// Package publishdb is the PostgreSQL adapter of the owner domain's event
// publishing: its unit of work and the idempotency keys
// (event_publish_keys, whose rows go with their event when it is pruned).
package publishdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/publish"
)

// NewUnitOfWork returns the publishing unit of work over pool; its Tx
// records events with rec bound to the transaction.
func NewUnitOfWork(pool *pgxpool.Pool, rec uow.Recorder) *uow.UnitOfWork[publish.Tx] {
	return uow.New(pool, rec, func(tx pgx.Tx, rec domain.Recorder) publish.Tx { return &txn{tx: tx, rec: rec} })
}

type txn struct {
	tx  pgx.Tx
	rec domain.Recorder
}

func (t *txn) Recorder() domain.Recorder { return t.rec }
func (t *txn) Keys() publish.KeyStore    { return keys{tx: t.tx} }

// keys implements publish.KeyStore.
type keys struct{ tx pgx.Tx }

func (k keys) Find(ctx context.Context, ownerID uuid.UUID, key string) (publish.Claimed, bool, error) {
	var c publish.Claimed
	err := k.tx.QueryRow(ctx, `SELECT event_id, request_sha256 FROM event_publish_keys WHERE owner_id = $1 AND key = $2`, ownerID, key).
		Scan(&c.EventID, &c.Fingerprint)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return publish.Claimed{}, false, nil
	case err != nil:
		return publish.Claimed{}, false, fmt.Errorf("find idempotency key: %w", err)
	}
	return c, true, nil
}

// Claim inserts the key; a concurrent transaction holding the same key
// makes it wait for that one's outcome, so a committed winner is seen as a
// conflict and an aborted one leaves the key to this transaction.
func (k keys) Claim(ctx context.Context, ownerID uuid.UUID, key string, c publish.Claimed) (bool, error) {
	tag, err := k.tx.Exec(ctx, `INSERT INTO event_publish_keys (owner_id, key, event_id, request_sha256) VALUES ($1, $2, $3, $4)
ON CONFLICT (owner_id, key) DO NOTHING`, ownerID, key, c.EventID, c.Fingerprint)
	if err != nil {
		return false, fmt.Errorf("claim idempotency key: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
