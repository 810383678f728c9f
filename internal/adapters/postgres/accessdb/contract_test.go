package accessdb_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/access/accesstest"
	"github.com/standmeet/standmeet/internal/adapters/postgres/accessdb"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/testdb"
)

func newUoW(t *testing.T) (access.UnitOfWork, *pgxpool.Pool) {
	t.Helper()
	pool := testdb.New(t)
	rec := events.NewRecorder(func(name string) bool { _, ok := domain.LookupEventType(name); return ok }, nil)
	return accessdb.NewUnitOfWork(pool, func(tx pgx.Tx) domain.Recorder { return rec.With(tx) }), pool
}

func newOwner(t *testing.T, pool *pgxpool.Pool) uuid.UUID {
	t.Helper()
	id := uuid.New()
	_, err := pool.Exec(context.Background(), `INSERT INTO owners (id, email, password_hash, created_at, updated_at)
VALUES ($1, $2, 'x', now(), now())`, id, id.String()+"@example.test")
	require.NoError(t, err)
	return id
}

// TestPostgresPassesTheContract runs the access contract — the one the
// in-memory fake passes — on PostgreSQL.
func TestPostgresPassesTheContract(t *testing.T) {
	t.Parallel()
	accesstest.RunContract(t, func(t *testing.T) accesstest.Harness {
		uow, pool := newUoW(t)
		return accesstest.Harness{
			UoW:      uow,
			NewOwner: func(t *testing.T) uuid.UUID { return newOwner(t, pool) },
			EventTypes: func(t *testing.T, ownerID uuid.UUID) []string {
				rows, err := pool.Query(context.Background(), `SELECT type FROM events WHERE owner_id = $1 ORDER BY seq`, ownerID)
				require.NoError(t, err)
				types, err := pgx.CollectRows(rows, pgx.RowTo[string])
				require.NoError(t, err)
				return types
			},
		}
	})
}

func TestOwnersResolve(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	owners := accessdb.NewOwners(pool)
	ctx := context.Background()
	code := func(err error) string {
		de := domain.AsError(err)
		require.NotNil(t, de, "%v", err)
		return de.Code
	}
	_, err := owners.Resolve(ctx, "")
	require.Equal(t, "NO_OWNER", code(err))
	a := newOwner(t, pool)
	got, err := owners.Resolve(ctx, "")
	require.NoError(t, err)
	require.Equal(t, a, got, "the only owner")
	b := newOwner(t, pool)
	_, err = owners.Resolve(ctx, "")
	require.Equal(t, "OWNER_REQUIRED", code(err))
	got, err = owners.Resolve(ctx, b.String())
	require.NoError(t, err)
	require.Equal(t, b, got)
	_, err = owners.Resolve(ctx, uuid.NewString())
	require.Equal(t, "UNKNOWN_OWNER", code(err))
	_, err = owners.Resolve(ctx, "not-an-id")
	require.Equal(t, "UNKNOWN_OWNER", code(err))
}
