package corpusdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/testdb"
)

// watched are the trigger's watched columns (docs/design/origins.md) with an
// update that changes each; unwatched are the columns whose change is no event.
// Every column of corpus_notes is in exactly one list
// (TestTriggerWatchesEveryColumnByDecision), so a new column forces a decision.
var (
	watched = map[string]string{
		"genre":          `genre = 'journal'`,
		"title":          `title = title || '!'`,
		"body":           `body = body || '!'`,
		"tags":           `tags = tags || '{x}'`,
		"parent_id":      `parent_id = CASE WHEN parent_id IS NULL THEN $2::uuid END`,
		"published":      `published = NOT published`,
		"show_as_source": `show_as_source = NOT show_as_source`,
		"aliases":        `aliases = aliases || '{x}'`,
		"excerpt":        `excerpt = excerpt || '!'`,
		"slug":           `slug = slug || 's'`,
		"archived":       `archived = NOT archived`,
		"css_classes":    `css_classes = css_classes || '{x}'`,
		"lang":           `lang = lang || 'e'`,
	}
	unwatched = []string{"id", "owner_id", "created_at", "updated_at", "search_config", "search_tsv"}
)

func TestTriggerWatchesEveryColumnByDecision(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT column_name FROM information_schema.columns WHERE table_name = 'corpus_notes'`)
	require.NoError(t, err)
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	var want []string
	for c := range watched {
		want = append(want, c)
	}
	want = append(want, unwatched...)
	require.ElementsMatch(t, want, cols, "every column is watched or deliberately not")

	owner := newOwner(t, pool)
	parent, note := uuid.New(), uuid.New()
	_, err = pool.Exec(ctx, `INSERT INTO corpus_notes (id, owner_id, genre, title) VALUES ($1, $2, 'wiki', 'Parent')`, parent, owner)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO corpus_notes (id, owner_id, genre, title, parent_id) VALUES ($1, $2, 'wiki', 'Note', $3)`, note, owner, parent)
	require.NoError(t, err)
	count := func() int {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE owner_id = $1`, owner).Scan(&n))
		return n
	}
	require.Equal(t, 2, count(), "one event per insert")

	for _, noop := range []string{
		`UPDATE corpus_notes SET updated_at = now() + interval '1 day' WHERE id = $1`,
		`UPDATE corpus_notes SET title = title, tags = tags, published = published WHERE id = $1`,
	} {
		_, err := pool.Exec(ctx, noop, note)
		require.NoError(t, err)
		require.Equal(t, 2, count(), "no event for %s", noop)
	}

	for col, set := range watched {
		before := count()
		args := []any{note}
		if col == "parent_id" {
			args = append(args, parent)
		}
		_, err := pool.Exec(ctx, `UPDATE corpus_notes SET `+set+` WHERE id = $1`, args...)
		require.NoError(t, err, col)
		require.Equal(t, before+1, count(), "a change of %s emits one event", col)
	}

	// The payload's keys are fixed, whatever the operation.
	_, err = pool.Exec(ctx, `DELETE FROM corpus_notes WHERE id = $1`, note)
	require.NoError(t, err)
	rows, err = pool.Query(ctx, `SELECT data FROM events WHERE owner_id = $1`, owner)
	require.NoError(t, err)
	datas, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	require.NoError(t, err)
	for _, d := range datas {
		var m map[string]any
		require.NoError(t, json.Unmarshal(d, &m))
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		require.ElementsMatch(t, []string{"op", "note_id", "genre", "parent_id", "published", "was_published", "path_changed"}, keys)
	}

	// The trigger queues no wake-up of its own: a NOTIFY per write would
	// make note writes commit one at a time (the writer wakes the relay,
	// TestANoteWriteWakesTheRelayOncePerSpacing).
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, `LISTEN standmeet_events`)
	require.NoError(t, err)
	written := count()
	_, err = pool.Exec(ctx, `UPDATE corpus_notes SET body = 'quiet' WHERE id = $1`, parent)
	require.NoError(t, err)
	require.Equal(t, written+1, count(), "the write emitted its event")
	waitCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = conn.Conn().WaitForNotification(waitCtx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the trigger notified")
	_, err = conn.Exec(ctx, `UNLISTEN *`)
	require.NoError(t, err)
}

// TestANoteWriteWakesTheRelayOncePerSpacing: a note written through the unit
// of work wakes the relay at commit; writes within events.NotifySpacing of
// it queue no wake-up of their own, so they commit together.
func TestANoteWriteWakesTheRelayOncePerSpacing(t *testing.T) {
	t.Parallel()
	uow, pool := newUoW(t)
	ctx := context.Background()
	owner := newOwner(t, pool)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, `LISTEN standmeet_events`)
	require.NoError(t, err)

	start := time.Now()
	for i := range 3 {
		require.NoError(t, uow.Do(ctx, func(tx corpus.Tx) error {
			_, err := tx.Notes().Insert(ctx, corpus.Note{ID: uuid.New(), OwnerID: owner, Genre: corpus.GenreWiki, Title: fmt.Sprintf("Note %d", i)})
			return err
		}))
	}
	quick := time.Since(start) < events.NotifySpacing
	hang, cancelHang := context.WithTimeout(ctx, 10*time.Second) // a bound on a hang
	defer cancelHang()
	_, err = conn.Conn().WaitForNotification(hang)
	require.NoError(t, err, "the first write wakes the relay")
	if quick {
		waitCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err = conn.Conn().WaitForNotification(waitCtx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "writes within the spacing queued a wake-up of their own")
	}
	_, err = conn.Exec(ctx, `UNLISTEN *`)
	require.NoError(t, err)
}
