package testdb

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEachTestGetsItsOwnMigratedDatabase(t *testing.T) {
	t.Parallel()
	a, b := New(t), New(t)
	ctx := context.Background()
	var nameA, nameB string
	require.NoError(t, a.QueryRow(ctx, `SELECT current_database()`).Scan(&nameA))
	require.NoError(t, b.QueryRow(ctx, `SELECT current_database()`).Scan(&nameB))
	require.NotEqual(t, nameA, nameB)
	var n int
	require.NoError(t, a.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&n))
	require.Zero(t, n)
	_, err := a.Exec(ctx, `INSERT INTO events (owner_id, type) VALUES (gen_random_uuid(), 'x.y')`)
	require.NoError(t, err)
	require.NoError(t, b.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&n))
	require.Zero(t, n, "databases must not share rows")
}
