package events_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/testdb"
)

func TestStoreListPagesNewestFirstPerOwner(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	me, other := uuid.New(), uuid.New()
	// Seven events of mine a minute apart (two types), one of another owner.
	_, err := pool.Exec(ctx, `INSERT INTO events (owner_id, type, occurred_at)
SELECT $1, CASE WHEN i % 2 = 0 THEN 'even.t' ELSE 'odd.t' END, now() - make_interval(mins => i)
FROM generate_series(1, 7) i`, me)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO events (owner_id, type) VALUES ($1, 'even.t')`, other)
	require.NoError(t, err)
	store := events.NewStore(pool)

	var all []events.Event
	cursor := ""
	for range 10 {
		p, err := store.List(ctx, me, "", 3, cursor)
		require.NoError(t, err)
		all = append(all, p.Events...)
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	require.Len(t, all, 7)
	for i := 1; i < len(all); i++ {
		require.True(t, all[i-1].OccurredAt.After(all[i].OccurredAt), "newest first")
		require.Equal(t, me, all[i].OwnerID)
	}

	even, err := store.List(ctx, me, "even.t", 50, "")
	require.NoError(t, err)
	require.Len(t, even.Events, 3)
	require.Empty(t, even.NextCursor)
	for _, e := range even.Events {
		require.Equal(t, "even.t", e.Type)
	}

	_, err = store.List(ctx, me, "", 3, "not-a-cursor")
	require.ErrorIs(t, err, events.ErrBadCursor)
	empty, err := store.ListPoisoned(ctx, me, 5, "")
	require.NoError(t, err)
	require.NotNil(t, empty.Events)
	require.Empty(t, empty.Events)
}

func TestStoreReleaseIsOwnerScoped(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	me, other := uuid.New(), uuid.New()
	var poisoned, healthy uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO events (owner_id, type, relay_attempts, relay_error, poisoned_at)
VALUES ($1, 'x.y', 5, 'boom', now()) RETURNING id`, me).Scan(&poisoned))
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO events (owner_id, type) VALUES ($1, 'x.y') RETURNING id`, me).Scan(&healthy))
	store := events.NewStore(pool)

	cases := []struct {
		name  string
		owner uuid.UUID
		id    uuid.UUID
		want  error
	}{
		{"another owner's event", other, poisoned, events.ErrNotFound},
		{"no such event", me, uuid.New(), events.ErrNotFound},
		{"not poisoned", me, healthy, events.ErrNotPoisoned},
	}
	for _, tc := range cases {
		_, err := store.Release(ctx, tc.owner, tc.id)
		require.ErrorIs(t, err, tc.want, tc.name)
	}
	p, err := store.ListPoisoned(ctx, other, 5, "")
	require.NoError(t, err)
	require.Empty(t, p.Events, "another owner sees none of mine")

	ev, err := store.Release(ctx, me, poisoned)
	require.NoError(t, err)
	require.Nil(t, ev.PoisonedAt)
	require.Zero(t, ev.RelayAttempts)
	require.NotNil(t, ev.RelayError, "the last error stays for the record")
	require.Equal(t, "boom", *ev.RelayError)
	_, err = store.Release(ctx, me, poisoned)
	require.ErrorIs(t, err, events.ErrNotPoisoned)
}

func TestStorePoisonedPages(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	me := uuid.New()
	_, err := pool.Exec(ctx, `INSERT INTO events (owner_id, type, relay_attempts, poisoned_at)
SELECT $1, 'x.y', 5, now() - make_interval(secs => i) FROM generate_series(1, 5) i`, me)
	require.NoError(t, err)
	store := events.NewStore(pool)
	seen := map[uuid.UUID]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5)
		p, err := store.ListPoisoned(ctx, me, 2, cursor)
		require.NoError(t, err)
		for _, e := range p.Events {
			require.False(t, seen[e.ID], "an event on two pages")
			seen[e.ID] = true
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	require.Len(t, seen, 5)
}
