package uuidparam_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/uuidparam"
	"github.com/standmeet/standmeet/internal/testdb"
)

func ids(n int) []uuid.UUID {
	out := make([]uuid.UUID, n)
	for i := range out {
		out[i] = uuid.New()
	}
	return out
}

// TestRegisterEncodesTheSameBytesWithoutTheTextRoundTrip: an array of ids
// encodes to the bytes pgx gives it by default, with under a quarter of
// the allocations (19 against 163 for eight ids). It is not parallel:
// testing.AllocsPerRun refuses to run in a parallel test.
func TestRegisterEncodesTheSameBytesWithoutTheTextRoundTrip(t *testing.T) {
	plain, fast := pgtype.NewMap(), pgtype.NewMap()
	uuidparam.Register(fast)
	in := ids(8)
	want, err := plain.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, in, nil)
	require.NoError(t, err)
	got, err := fast.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, in, nil)
	require.NoError(t, err)
	require.Equal(t, want, got)

	allocs := func(m *pgtype.Map) float64 {
		var buf []byte
		return testing.AllocsPerRun(50, func() {
			buf, err = m.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, in, buf[:0])
		})
	}
	require.Less(t, allocs(fast)*4, allocs(plain))
}

// TestRegisteredPoolRoundTripsEveryShapeOfID sends ids as uuid, uuid[],
// text, and as a nil and a set pointer through PostgreSQL on a pool that
// registers on connect.
func TestRegisteredPoolRoundTripsEveryShapeOfID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(testdb.NewURL(t))
	require.NoError(t, err)
	cfg.AfterConnect = uuidparam.AfterConnect
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	in := ids(3)
	var none *uuid.UUID
	var (
		one, set uuid.UUID
		many     []uuid.UUID
		text     string
		null     bool
	)
	err = pool.QueryRow(ctx, `SELECT $1::uuid, $2::uuid[], $3::text, $4::uuid IS NULL, $5::uuid`, in[0], in, in[1], none, &in[2]).
		Scan(&one, &many, &text, &null, &set)
	require.NoError(t, err)
	require.Equal(t, in[0], one)
	require.Equal(t, in, many)
	require.Equal(t, in[1].String(), text)
	require.True(t, null)
	require.Equal(t, in[2], set)

	var found bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT $1::uuid = ANY($2::uuid[])`, in[1], in).Scan(&found))
	require.True(t, found)
}
