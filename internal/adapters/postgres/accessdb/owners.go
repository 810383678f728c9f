package accessdb

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/domain"
)

// Owners answers which owner a public request acts for. It reads only the
// ids of the owner domain's owners table (nothing else of it), which is what
// the public routes need to scope a search or an access request.
type Owners struct {
	pool *pgxpool.Pool
}

// NewOwners returns the owner directory over pool.
func NewOwners(pool *pgxpool.Pool) *Owners { return &Owners{pool: pool} }

// Resolve returns the owner named by requested (a ?owner= id), or, when it
// is empty, the instance's only owner. Several owners and no ?owner= is 400
// OWNER_REQUIRED; an unknown or malformed id, or no owner at all, is 404.
func (o *Owners) Resolve(ctx context.Context, requested string) (uuid.UUID, error) {
	if requested != "" {
		id, err := uuid.Parse(requested)
		if err != nil {
			return uuid.Nil, domain.NotFound("UNKNOWN_OWNER", "no such owner")
		}
		var exists bool
		if err := o.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM owners WHERE id = $1)`, id).Scan(&exists); err != nil {
			return uuid.Nil, fmt.Errorf("look up owner: %w", err)
		}
		if !exists {
			return uuid.Nil, domain.NotFound("UNKNOWN_OWNER", "no such owner")
		}
		return id, nil
	}
	rows, err := o.pool.Query(ctx, `SELECT id FROM owners ORDER BY created_at, id LIMIT 2`)
	if err != nil {
		return uuid.Nil, fmt.Errorf("list owners: %w", err)
	}
	defer rows.Close()
	var ids []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			return uuid.Nil, fmt.Errorf("list owners: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return uuid.Nil, fmt.Errorf("list owners: %w", err)
	}
	switch len(ids) {
	case 0:
		return uuid.Nil, domain.NotFound("NO_OWNER", "this instance has no owner yet")
	case 1:
		return ids[0], nil
	default:
		return uuid.Nil, domain.Validation("OWNER_REQUIRED", "this instance has several owners: name one with ?owner=<id>").WithField("owner")
	}
}
