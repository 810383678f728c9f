package migrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/testdb"
)

// TestEventsOutliveTheirOwnerRow holds the reason events.owner_id has no
// foreign key. Deleting an owner cascades to its notes, and the notes'
// trigger records each deletion as an event of that owner in the same
// statement: the deletion succeeds and the log keeps those events (and the
// owner's earlier ones) for the retention to remove by age. With a foreign
// key to owners the same deletion fails, whether the key refuses (the
// owner's events reference it) or cascades (the trigger's events, written
// during the cascade, reference the owner being deleted).
func TestEventsOutliveTheirOwnerRow(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	ownerWithANote := func(tx pgx.Tx) uuid.UUID {
		owner := uuid.New()
		now := time.Now()
		_, err := tx.Exec(ctx, `INSERT INTO owners (id, email, password_hash, created_at, updated_at) VALUES ($1, $2, 'x', $3, $3)`,
			owner, owner.String()+"@example.test", now)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, `INSERT INTO corpus_notes (id, owner_id, genre, title) VALUES ($1, $2, 'wiki', 'a note')`, uuid.New(), owner)
		require.NoError(t, err)
		return owner
	}
	deletedNotes := func(q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}, owner uuid.UUID) int {
		var n int
		require.NoError(t, q.QueryRow(ctx, `SELECT count(*) FROM events WHERE owner_id = $1 AND type = 'corpus.note.changed' AND data->>'op' = 'deleted'`, owner).Scan(&n))
		return n
	}

	var owner uuid.UUID
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		owner = ownerWithANote(tx)
		return nil
	}))
	_, err := pool.Exec(ctx, `DELETE FROM owners WHERE id = $1`, owner)
	require.NoError(t, err, "an owner's deletion records its notes' deletions")
	require.Equal(t, 1, deletedNotes(pool, owner), "the log keeps the events of a deleted owner")
	var events int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE owner_id = $1`, owner).Scan(&events))
	require.Equal(t, 2, events, "the note's creation and its deletion")

	// The same deletion under a foreign key, refusing or cascading (each
	// rolled back).
	for _, action := range []string{"NO ACTION", "CASCADE"} {
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.Exec(ctx, `ALTER TABLE events ADD CONSTRAINT events_owner_fkey FOREIGN KEY (owner_id) REFERENCES owners (id) ON DELETE `+action+` NOT VALID`)
		require.NoError(t, err)
		other := ownerWithANote(tx)
		_, err = tx.Exec(ctx, `DELETE FROM owners WHERE id = $1`, other)
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr, "ON DELETE %s: the deletion fails", action)
		require.Equal(t, "23503", pgErr.Code, "foreign_key_violation: %s", pgErr.Message)
		require.NoError(t, tx.Rollback(ctx))
	}
}
