package publishdb_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/publishdb"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/owner/publish/publishtest"
	"github.com/standmeet/standmeet/internal/testdb"
)

// TestPostgresPassesTheContract runs the publish contract — the one the
// in-memory fake passes — on PostgreSQL.
func TestPostgresPassesTheContract(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	rec := events.NewRecorder(func(name string) bool { _, ok := domain.LookupEventType(name); return ok }, nil)
	uow := publishdb.NewUnitOfWork(pool, func(tx pgx.Tx) domain.Recorder { return rec.With(tx) })
	publishtest.RunContract(t, func(t *testing.T) publishtest.Harness {
		return publishtest.Harness{
			UoW: uow,
			EventIDs: func(t *testing.T, ownerID uuid.UUID) []uuid.UUID {
				rows, err := pool.Query(context.Background(), `SELECT id FROM events WHERE owner_id = $1 ORDER BY seq`, ownerID)
				require.NoError(t, err)
				ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
				require.NoError(t, err)
				return ids
			},
			Prune: func(t *testing.T, id uuid.UUID) {
				_, err := pool.Exec(context.Background(), `DELETE FROM events WHERE id = $1`, id)
				require.NoError(t, err)
			},
		}
	})
}
