package webhookdb_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/webhookdb"
)

// OwnersWithEndpoints names exactly the owners for whom Store.Endpoints
// (what a fan-out reads) lists an endpoint: a disabled endpoint counts, a
// deleted one does not, and an owner with none is left out.
func TestOwnersWithEndpointsAgreesWithTheFanoutsEndpoints(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	enabled, disabled, deleted, none := b.owner, b.newOwner(t), b.newOwner(t), b.newOwner(t)
	b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	b.owner = disabled
	b.endpoint(t, `{"url":"https://b.example/h","event_types":["code.*"],"enabled":false}`)
	b.owner = deleted
	gone := b.endpoint(t, `{"url":"https://c.example/h","event_types":["*"]}`)
	require.NoError(t, b.svc.Delete(ctx, deleted, gone.ID))

	owners := []uuid.UUID{enabled, disabled, deleted, none}
	rows, err := b.pool.Query(ctx, webhookdb.OwnersWithEndpoints, owners)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	require.NoError(t, err)
	got := map[uuid.UUID]bool{}
	for _, id := range ids {
		got[id] = true
	}
	require.Equal(t, map[uuid.UUID]bool{enabled: true, disabled: true}, got)
	for _, o := range owners {
		eps, err := b.store.Endpoints(ctx, o)
		require.NoError(t, err)
		require.Equal(t, len(eps) > 0, got[o], "owner %s: the fan-out's endpoints and the relay's answer disagree", o)
	}
}
