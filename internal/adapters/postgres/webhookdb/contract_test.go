package webhookdb_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/postgres/webhookdb"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/owner/webhook/webhooktest"
	"github.com/standmeet/standmeet/internal/testdb"
)

// TestPostgresPassesTheEndpointContract runs the endpoint store's contract —
// the one the in-memory fake passes — on PostgreSQL, every case on its own
// owners of one database.
func TestPostgresPassesTheEndpointContract(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ins, err := riverjob.NewInserter(pool, 0, zap.NewNop())
	require.NoError(t, err)
	uow := webhookdb.NewUnitOfWork(pool, nil, ins)
	webhooktest.RunEndpointContract(t, func(*testing.T) webhooktest.Harness {
		return webhooktest.Harness{UoW: uow, NewOwner: func(t *testing.T) uuid.UUID {
			id := uuid.New()
			_, err := pool.Exec(context.Background(), `INSERT INTO owners (id, email, password_hash, created_at, updated_at)
VALUES ($1, $2, 'x', now(), now())`, id, id.String()+"@example.com")
			require.NoError(t, err)
			return id
		}}
	})
}
