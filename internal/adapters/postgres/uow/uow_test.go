package uow_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/testdb"
)

// txOf is what a test's bind hands fn: the transaction and the Recorder the
// kit bound to it.
type txOf struct {
	tx  pgx.Tx
	rec domain.Recorder
}

// kit returns a unit of work on a fresh database recording with the real
// Recorder, and reports through bound each transaction the Recorder was
// bound to.
func kit(t *testing.T) (*uow.UnitOfWork[txOf], *pgxpool.Pool, *[]pgx.Tx) {
	t.Helper()
	pool := testdb.New(t)
	rec := events.NewRecorder(func(string) bool { return true }, nil)
	var bound []pgx.Tx
	u := uow.New(pool, func(tx pgx.Tx) domain.Recorder {
		bound = append(bound, tx)
		return rec.With(tx)
	}, func(tx pgx.Tx, r domain.Recorder) txOf { return txOf{tx: tx, rec: r} })
	return u, pool, &bound
}

func newOwner(ctx context.Context, tx pgx.Tx) (uuid.UUID, error) {
	id := uuid.New()
	_, err := tx.Exec(ctx, `INSERT INTO owners (id, email, password_hash, created_at, updated_at)
VALUES ($1, $2, 'x', now(), now())`, id, id.String()+"@example.test")
	return id, err
}

func count(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, pool.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func TestDoCommitsWhenFnReturnsNil(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, pool, bound := kit(t)
	var ownerID, eventID uuid.UUID
	err := u.Do(ctx, func(x txOf) error {
		var err error
		if ownerID, err = newOwner(ctx, x.tx); err != nil {
			return err
		}
		eventID, err = x.rec.Record(ctx, ownerID, "test.happened", "s1", map[string]any{"n": 1})
		return err
	})
	require.NoError(t, err)
	require.Equal(t, 1, count(t, pool, `SELECT count(*) FROM owners WHERE id = $1`, ownerID))
	require.Equal(t, 1, count(t, pool, `SELECT count(*) FROM events WHERE id = $1 AND owner_id = $2 AND type = 'test.happened'`, eventID, ownerID))
	require.Len(t, *bound, 1)
}

func TestDoRollsBackAndReturnsFnsErrorAsIs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, pool, _ := kit(t)
	refused := domain.Conflict("REFUSED", "no")
	var ownerID uuid.UUID
	err := u.Do(ctx, func(x txOf) error {
		var err error
		if ownerID, err = newOwner(ctx, x.tx); err != nil {
			return err
		}
		if _, err := x.rec.Record(ctx, ownerID, "test.happened", "s1", map[string]any{}); err != nil {
			return err
		}
		return refused
	})
	require.Same(t, refused, err, "fn's error comes back as is, not wrapped")
	require.Zero(t, count(t, pool, `SELECT count(*) FROM owners WHERE id = $1`, ownerID))
	require.Zero(t, count(t, pool, `SELECT count(*) FROM events WHERE owner_id = $1`, ownerID), "the event goes with the rolled-back change")
}

// TestRecorderIsBoundToTheSameTransaction: the event is visible inside the
// transaction that recorded it and nowhere else until it commits.
func TestRecorderIsBoundToTheSameTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, pool, bound := kit(t)
	ownerID := uuid.New()
	err := u.Do(ctx, func(x txOf) error {
		require.Len(t, *bound, 1)
		require.Same(t, x.tx, (*bound)[0], "the Recorder is bound to fn's transaction")
		id, err := x.rec.Record(ctx, ownerID, "test.happened", "s1", map[string]any{})
		require.NoError(t, err)
		var inside int
		require.NoError(t, x.tx.QueryRow(ctx, `SELECT count(*) FROM events WHERE id = $1`, id).Scan(&inside))
		require.Equal(t, 1, inside)
		require.Zero(t, count(t, pool, `SELECT count(*) FROM events WHERE id = $1`, id), "not visible outside before commit")
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 1, count(t, pool, `SELECT count(*) FROM events WHERE owner_id = $1`, ownerID))
}

func TestDoWithoutRecorderBindsNil(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	u := uow.New(pool, nil, func(tx pgx.Tx, r domain.Recorder) txOf { return txOf{tx: tx, rec: r} })
	require.NoError(t, u.Do(ctx, func(x txOf) error {
		require.Nil(t, x.rec)
		require.NotNil(t, x.tx)
		return nil
	}))
}

func TestDoReportsAFailedBegin(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	u := uow.New(pool, nil, func(tx pgx.Tx, r domain.Recorder) txOf { return txOf{tx: tx} })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err := u.Do(ctx, func(txOf) error { called = true; return nil })
	require.Error(t, err)
	require.True(t, errors.Is(err, context.Canceled))
	require.False(t, called)
}

// TestDoRunsInASavepointOfACallersTransaction: on a pgx.Tx, Do's commit and
// rollback are a savepoint's, and the caller's transaction decides.
func TestDoRunsInASavepointOfACallersTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	outer, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { require.NoError(t, outer.Rollback(ctx)) }()
	u := uow.New(outer, nil, func(tx pgx.Tx, r domain.Recorder) txOf { return txOf{tx: tx} })
	seen := func(id uuid.UUID) int {
		var n int
		require.NoError(t, outer.QueryRow(ctx, `SELECT count(*) FROM owners WHERE id = $1`, id).Scan(&n))
		return n
	}
	var dropped, kept uuid.UUID
	refused := errors.New("refused")
	require.ErrorIs(t, u.Do(ctx, func(x txOf) error {
		if dropped, err = newOwner(ctx, x.tx); err != nil {
			return err
		}
		return refused
	}), refused)
	require.Zero(t, seen(dropped), "rolled back to the savepoint")
	require.NoError(t, u.Do(ctx, func(x txOf) error {
		kept, err = newOwner(ctx, x.tx)
		return err
	}))
	require.Equal(t, 1, seen(kept), "released into the caller's transaction")
	require.Zero(t, count(t, pool, `SELECT count(*) FROM owners WHERE id = $1`, kept), "not committed until the caller commits")
}
