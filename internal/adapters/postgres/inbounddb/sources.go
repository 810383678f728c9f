package inbounddb

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/standmeet/standmeet/internal/adapters/postgres/pgerr"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

const sourceColumns = `id, owner_id, name, verifier, options, sealed_secret, enabled, body_limit,
	tolerance_seconds, secret_rotated_at, created_at, updated_at, previous_sealed_secret, previous_secret_expires_at, record_events`

func scanSource(row pgx.Row) (inbound.Source, error) {
	var s inbound.Source
	var opts []byte
	var rotated, prevExpires *time.Time
	err := row.Scan(&s.ID, &s.OwnerID, &s.Name, &s.Verifier, &opts, &s.SealedSecret, &s.Enabled, &s.BodyLimit,
		&s.ToleranceSeconds, &rotated, &s.CreatedAt, &s.UpdatedAt, &s.PreviousSealedSecret, &prevExpires, &s.RecordEvents)
	s.Options = opts
	s.SecretRotatedAt, s.PreviousSecretExpiresAt = deref(rotated), deref(prevExpires)
	return s, err
}

type sourceStore struct{ tx pgx.Tx }

func (s sourceStore) Insert(ctx context.Context, src inbound.Source) error {
	_, err := s.tx.Exec(ctx, `INSERT INTO inbound_sources (`+sourceColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		src.ID, src.OwnerID, src.Name, src.Verifier, []byte(src.Options), src.SealedSecret, src.Enabled, src.BodyLimit,
		src.ToleranceSeconds, nullTime(src.SecretRotatedAt), src.CreatedAt, src.UpdatedAt, nullBytes(src.PreviousSealedSecret), nullTime(src.PreviousSecretExpiresAt), src.RecordEvents)
	if err != nil {
		return fmt.Errorf("insert inbound source: %w", err)
	}
	return nil
}

func (s sourceStore) Get(ctx context.Context, ownerID, id uuid.UUID) (inbound.Source, error) {
	return s.get(ctx, ownerID, id, "")
}

// get reads one source; lock is appended to the query (" FOR UPDATE").
func (s sourceStore) get(ctx context.Context, ownerID, id uuid.UUID, lock string) (inbound.Source, error) {
	src, err := scanSource(s.tx.QueryRow(ctx, `SELECT `+sourceColumns+` FROM inbound_sources WHERE owner_id = $1 AND id = $2`+lock, ownerID, id))
	if err != nil {
		return inbound.Source{}, notFound(err, "get inbound source")
	}
	return src, nil
}

func (s sourceStore) Lock(ctx context.Context, ownerID, id uuid.UUID) error {
	var one int
	if err := s.tx.QueryRow(ctx, `SELECT 1 FROM inbound_sources WHERE owner_id = $1 AND id = $2 FOR UPDATE`, ownerID, id).Scan(&one); err != nil {
		return notFound(err, "lock inbound source")
	}
	return nil
}

func (s sourceStore) List(ctx context.Context, ownerID uuid.UUID, q inbound.PageQuery) ([]inbound.Source, error) {
	at, id := cursorArgs(q.After)
	rows, err := s.tx.Query(ctx, `SELECT `+sourceColumns+` FROM inbound_sources
		WHERE owner_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) < ($2, $3))
		ORDER BY created_at DESC, id DESC LIMIT $4`, ownerID, at, id, q.Limit+1)
	if err != nil {
		return nil, fmt.Errorf("list inbound sources: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (inbound.Source, error) { return scanSource(r) })
	if err != nil {
		return nil, fmt.Errorf("list inbound sources: %w", err)
	}
	return out, nil
}

// Update reads the source under its row lock, so concurrent changes of one
// source apply one after the other, and writes what fn leaves.
func (s sourceStore) Update(ctx context.Context, ownerID, id uuid.UUID, fn func(*inbound.Source) error) error {
	src, err := s.get(ctx, ownerID, id, ` FOR UPDATE`)
	if err != nil {
		return err
	}
	if err := fn(&src); err != nil {
		return err
	}
	tag, err := s.tx.Exec(ctx, `UPDATE inbound_sources SET name = $3, options = $4, sealed_secret = $5, enabled = $6,
		body_limit = $7, tolerance_seconds = $8, secret_rotated_at = $9, updated_at = $10,
		previous_sealed_secret = $11, previous_secret_expires_at = $12, record_events = $13
		WHERE owner_id = $1 AND id = $2`,
		ownerID, id, src.Name, []byte(src.Options), src.SealedSecret, src.Enabled,
		src.BodyLimit, src.ToleranceSeconds, nullTime(src.SecretRotatedAt), src.UpdatedAt,
		nullBytes(src.PreviousSealedSecret), nullTime(src.PreviousSecretExpiresAt), src.RecordEvents)
	if err != nil {
		return fmt.Errorf("update inbound source: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("update inbound source: %w", domain.ErrNotFound)
	}
	return nil
}

func (s sourceStore) DropExpiredPreviousSecrets(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.tx.Exec(ctx, `UPDATE inbound_sources SET previous_sealed_secret = NULL, previous_secret_expires_at = NULL
		WHERE previous_secret_expires_at <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("drop expired previous inbound secrets: %w", err)
	}
	return tag.RowsAffected(), nil
}

func (s sourceStore) Delete(ctx context.Context, ownerID, id uuid.UUID) error {
	tag, err := s.tx.Exec(ctx, `DELETE FROM inbound_sources WHERE owner_id = $1 AND id = $2`, ownerID, id)
	if err != nil {
		if pgerr.Is(err, pgerr.ForeignKeyViolation, "") {
			return inbound.ErrSourceInUse
		}
		return fmt.Errorf("delete inbound source: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete inbound source: %w", domain.ErrNotFound)
	}
	return nil
}

// cursorArgs turns a cursor into query arguments (NULLs for the first page).
func cursorArgs(c *inbound.Cursor) (*time.Time, uuid.UUID) {
	if c == nil {
		return nil, uuid.Nil
	}
	at := c.At
	return &at, c.ID
}

func nullBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
