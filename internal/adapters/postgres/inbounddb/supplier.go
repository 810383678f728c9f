package inbounddb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/adapters/postgres/pgerr"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier"
)

// NewSupplier returns the supplier connections' unit of work over pool: its
// Tx holds the connection store and rec bound to the transaction, so an
// event exists only if the change it records commits.
func NewSupplier(pool *pgxpool.Pool, rec uow.Recorder) *uow.UnitOfWork[supplier.Tx] {
	return uow.New(pool, rec, func(tx pgx.Tx, rec domain.Recorder) supplier.Tx { return supplierTxn{tx: tx, rec: rec} })
}

type supplierTxn struct {
	tx  pgx.Tx
	rec domain.Recorder
}

func (t supplierTxn) Connections() supplier.Store { return connectionStore(t) }
func (t supplierTxn) Recorder() domain.Recorder   { return t.rec }

type connectionStore struct {
	tx  pgx.Tx
	rec domain.Recorder
}

const connectionColumns = `id, owner_id, source_id, name, supplier, activated_at, created_at`

func scanConnection(row pgx.Row) (supplier.Connection, error) {
	var c supplier.Connection
	var activated *time.Time
	if err := row.Scan(&c.ID, &c.OwnerID, &c.SourceID, &c.Name, &c.Supplier, &activated, &c.CreatedAt); err != nil {
		return supplier.Connection{}, err
	}
	c.ActivatedAt = deref(activated)
	return c, nil
}

// Insert takes the connection only on a source of the same owner, in one
// statement; the unique index on source_id refuses a second connection.
func (s connectionStore) Insert(ctx context.Context, c supplier.Connection) error {
	tag, err := s.tx.Exec(ctx, `INSERT INTO supplier_connections (`+connectionColumns+`)
		SELECT $1, $2, id, $4, $5, NULL, $6 FROM inbound_sources WHERE id = $3 AND owner_id = $2`,
		c.ID, c.OwnerID, c.SourceID, c.Name, c.Supplier, c.CreatedAt)
	if err != nil {
		if pgerr.Is(err, pgerr.UniqueViolation, "supplier_connections_source_key") {
			return supplier.ErrSourceTaken
		}
		return fmt.Errorf("insert supplier connection: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return supplier.ErrSourceNotFound
	}
	return nil
}

func (s connectionStore) Get(ctx context.Context, ownerID, id uuid.UUID) (supplier.Connection, error) {
	c, err := scanConnection(s.tx.QueryRow(ctx, `SELECT `+connectionColumns+` FROM supplier_connections
		WHERE owner_id = $1 AND id = $2`, ownerID, id))
	if err != nil {
		return supplier.Connection{}, notFound(err, "get supplier connection")
	}
	return c, nil
}

func (s connectionStore) List(ctx context.Context, ownerID uuid.UUID, q inbound.PageQuery) ([]supplier.Connection, error) {
	at, id := cursorArgs(q.After)
	rows, err := s.tx.Query(ctx, `SELECT `+connectionColumns+` FROM supplier_connections
		WHERE owner_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) < ($2, $3))
		ORDER BY created_at DESC, id DESC LIMIT $4`, ownerID, at, id, q.Limit+1)
	if err != nil {
		return nil, fmt.Errorf("list supplier connections: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (supplier.Connection, error) { return scanConnection(r) })
	if err != nil {
		return nil, fmt.Errorf("list supplier connections: %w", err)
	}
	return out, nil
}

func (s connectionStore) Delete(ctx context.Context, ownerID, id uuid.UUID) (supplier.Connection, error) {
	c, err := scanConnection(s.tx.QueryRow(ctx, `DELETE FROM supplier_connections WHERE owner_id = $1 AND id = $2
		RETURNING `+connectionColumns, ownerID, id))
	if err != nil {
		return supplier.Connection{}, notFound(err, "delete supplier connection")
	}
	return c, nil
}

func (s connectionStore) Activate(ctx context.Context, ownerID, sourceID uuid.UUID, at time.Time) (supplier.Connection, bool, error) {
	c, err := scanConnection(s.tx.QueryRow(ctx, `UPDATE supplier_connections SET activated_at = $3
		WHERE owner_id = $1 AND source_id = $2 AND activated_at IS NULL
		RETURNING `+connectionColumns, ownerID, sourceID, at))
	if errors.Is(err, pgx.ErrNoRows) {
		return supplier.Connection{}, false, nil
	}
	if err != nil {
		return supplier.Connection{}, false, fmt.Errorf("activate supplier connection: %w", err)
	}
	return c, true, nil
}
