package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/testdb"
)

func TestParseRetention(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"", events.DefaultRetention, false},
		{"  ", events.DefaultRetention, false},
		{"7d", 7 * 24 * time.Hour, false},
		{"720h", 720 * time.Hour, false},
		{"90m", 90 * time.Minute, false},
		{"0d", 0, true},
		{"-1h", 0, true},
		{"d", 0, true},
		{"1.5d", 0, true},
		{"month", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := events.ParseRetention(tc.in)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestRetentionJobPrunesOldEvents runs the periodic prune through a started
// River client: old fanned-out and old poisoned events go (more than one
// batch of them), new ones and old never-fanned-out ones stay.
func TestRetentionJobPrunesOldEvents(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	owner := uuid.New()
	insert := func(n int, age string, fanned, poisoned bool) {
		t.Helper()
		_, err := pool.Exec(ctx, `INSERT INTO events (owner_id, type, occurred_at, fanned_out_at, fanout, poisoned_at)
SELECT $1, 'x.y', now() - $2::interval,
  CASE WHEN $3 THEN now() END, CASE WHEN $3 THEN '[]'::jsonb END, CASE WHEN $4 THEN now() END
FROM generate_series(1, $5)`, owner, age, fanned, poisoned, n)
		require.NoError(t, err)
	}
	insert(2500, "40 days", true, false) // pruned, in three batches
	insert(3, "31 days", false, true)    // old poisoned: pruned
	insert(4, "40 days", false, false)   // old, still owed to subscribers: kept
	insert(5, "29 days", true, false)    // within retention: kept
	insert(6, "1 day", false, true)      // recently poisoned: kept

	cfg := riverConfig(func(w *river.Workers) { river.AddWorker(w, events.NewPruneWorker(pool, testLogger(t), nil)) })
	cfg.PeriodicJobs = events.PeriodicJobs(30 * 24 * time.Hour)
	client, err := river.NewClient(riverpgxv5.New(pool), cfg)
	require.NoError(t, err)
	completed, stop := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer stop()
	require.NoError(t, client.Start(ctx))
	defer func() {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		require.NoError(t, client.Stop(stopCtx))
	}()

	timeout := time.After(time.Minute)
	for done := false; !done; {
		select {
		case ev := <-completed:
			if ev.Job.Kind != events.PruneKind {
				continue
			}
			require.Equal(t, river.EventKindJobCompleted, ev.Kind, "prune failed: %v", ev.Job.Errors)
			done = true
		case <-timeout:
			t.Fatal("the prune job did not run within a minute of start")
		}
	}

	var left, oldUnfanned, recentPoisoned int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*),
  count(*) FILTER (WHERE fanned_out_at IS NULL AND poisoned_at IS NULL),
  count(*) FILTER (WHERE poisoned_at IS NOT NULL)
FROM events`).Scan(&left, &oldUnfanned, &recentPoisoned))
	require.Equal(t, 4+5+6, left)
	require.Equal(t, 4, oldUnfanned)
	require.Equal(t, 6, recentPoisoned)
}

func TestPruneDeletesInBatches(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `INSERT INTO events (owner_id, type, occurred_at, fanned_out_at)
SELECT gen_random_uuid(), 'x.y', now() - interval '2 hours', now() FROM generate_series(1, 7)`)
	require.NoError(t, err)
	n, err := events.Prune(ctx, pool, time.Now().Add(-time.Hour), 3)
	require.NoError(t, err)
	require.EqualValues(t, 7, n)
	require.Zero(t, countEvents(t, pool))
}
