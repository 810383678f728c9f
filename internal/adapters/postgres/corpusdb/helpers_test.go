package corpusdb_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/corpusdb"
	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/testdb"
)

// newUoW returns the adapter's unit of work on a fresh database, recording
// events with the real Recorder and the domain catalog.
func newUoW(t *testing.T) (corpus.UnitOfWork, *pgxpool.Pool) {
	t.Helper()
	pool := testdb.New(t)
	rec := events.NewRecorder(func(name string) bool { _, ok := domain.LookupEventType(name); return ok }, nil)
	return corpusdb.NewUnitOfWork(pool, func(tx pgx.Tx) domain.Recorder { return rec.With(tx) }), pool
}

// ownerEvents reads the committed events of owner in seq order.
func ownerEvents(t *testing.T, pool *pgxpool.Pool, ownerID uuid.UUID) []corpus.ChangeEvent {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT id, owner_id, type, subject, data FROM events WHERE owner_id = $1 ORDER BY seq`, ownerID)
	require.NoError(t, err)
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (corpus.ChangeEvent, error) {
		var ev corpus.ChangeEvent
		err := r.Scan(&ev.ID, &ev.OwnerID, &ev.Type, &ev.Subject, &ev.Data)
		return ev, err
	})
	require.NoError(t, err)
	return evs
}

// newOwner inserts an owner row (notes reference owners).
func newOwner(t *testing.T, pool *pgxpool.Pool) uuid.UUID {
	t.Helper()
	id := uuid.New()
	_, err := pool.Exec(context.Background(), `INSERT INTO owners (id, email, password_hash, created_at, updated_at)
VALUES ($1, $2, 'x', now(), now())`, id, id.String()+"@example.test")
	require.NoError(t, err)
	return id
}
