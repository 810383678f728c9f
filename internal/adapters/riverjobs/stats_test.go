package riverjobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/riverjobs"
	"github.com/standmeet/standmeet/internal/testdb"
)

// insertJobs inserts n webhook.deliver rows in state on one connection and
// flushes that connection's table statistics, so pg_stat_user_tables counts
// them without waiting for the backend's next report.
func insertJobs(t *testing.T, pool *pgxpool.Pool, from, n int, state string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, finalized_at)
SELECT jsonb_build_object('event_id', g::text), 'webhook.deliver', 18, 'webhooks', $3::river_job_state,
  now() - interval '1 second', CASE WHEN $3 = 'completed' THEN now() END
FROM generate_series($1::int, $1::int + $2::int - 1) g`, from, n, state)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `SELECT pg_stat_force_next_flush()`)
	require.NoError(t, err)
	// The flush happens when the backend next goes idle; one more
	// statement makes sure it did.
	_, err = conn.Exec(ctx, `SELECT 1`)
	require.NoError(t, err)
}

// statsDB is a fresh database whose river_job autovacuum leaves alone, so
// only the keeper (or the test) analyses it.
func statsDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool := testdb.New(t)
	_, err := pool.Exec(context.Background(), `ALTER TABLE river_job SET (autovacuum_enabled = false)`)
	require.NoError(t, err)
	return pool
}

// plannedScheduled is the planner's row estimate for the scheduled jobs.
func plannedScheduled(t *testing.T, pool *pgxpool.Pool) float64 {
	t.Helper()
	var plan []map[string]map[string]any
	require.NoError(t, pool.QueryRow(context.Background(),
		`EXPLAIN (FORMAT JSON) SELECT id FROM river_job WHERE state = 'scheduled'`).Scan(&plan))
	return plan[0]["Plan"]["Plan Rows"].(float64)
}

func TestStatsKeeperAnalysesWhenTheWaitingJobsMoreThanDouble(t *testing.T) {
	t.Parallel()
	pool := statsDB(t)
	ctx := context.Background()
	// Only the waiting-jobs trigger: the change count never suffices.
	keeper := riverjobs.NewStatsKeeper(pool, zap.NewNop(), riverjobs.StatsOptions{MinChanges: 1 << 40, MinWaiting: 200})

	// Statistics taken when every job was completed: the planner believes
	// next to nothing is scheduled.
	insertJobs(t, pool, 1, 2000, "completed")
	_, err := pool.Exec(ctx, `ANALYZE river_job`)
	require.NoError(t, err)
	check := func() bool {
		t.Helper()
		analysed, err := keeper.Check(ctx)
		require.NoError(t, err)
		return analysed
	}
	require.False(t, check(), "nothing waits")
	insertJobs(t, pool, 2001, 100, "scheduled")
	require.False(t, check(), "100 waiting jobs are below MinWaiting")

	// A burst of parked deliveries.
	insertJobs(t, pool, 2101, 3000, "scheduled")
	require.Less(t, plannedScheduled(t, pool), 100.0, "stale statistics hide the burst")
	require.True(t, check(), "3,100 waiting jobs, more than twice none")
	require.Greater(t, plannedScheduled(t, pool), 2000.0, "the planner sees the burst")

	require.False(t, check(), "nothing grew since")
	insertJobs(t, pool, 5101, 1000, "retryable")
	require.False(t, check(), "4,100 is not more than twice 3,100 plus 200")
	insertJobs(t, pool, 6101, 3000, "scheduled")
	require.True(t, check(), "7,100 is")
}

func TestStatsKeeperAnalysesWhenAShareOfTheTableChanged(t *testing.T) {
	t.Parallel()
	pool := statsDB(t)
	ctx := context.Background()
	keeper := riverjobs.NewStatsKeeper(pool, zap.NewNop(), riverjobs.StatsOptions{MinChanges: 1000, Fraction: 0.5})
	insertJobs(t, pool, 1, 4000, "completed")
	_, err := pool.Exec(ctx, `ANALYZE river_job`)
	require.NoError(t, err)
	insertJobs(t, pool, 4001, 500, "available")
	analysed, err := keeper.Check(ctx)
	require.NoError(t, err)
	require.False(t, analysed, "500 changes are below MinChanges")
	insertJobs(t, pool, 4501, 1500, "available")
	// 2,000 changes over 6,000 live rows: above MinChanges, below half.
	analysed, err = keeper.Check(ctx)
	require.NoError(t, err)
	require.False(t, analysed)
	insertJobs(t, pool, 6001, 3000, "available")
	require.Eventually(t, func() bool {
		analysed, err := keeper.Check(ctx)
		require.NoError(t, err)
		return analysed
	}, 10*time.Second, 50*time.Millisecond, "5,000 changes over 9,000 live rows pass half")
	analysed, err = keeper.Check(ctx)
	require.NoError(t, err)
	require.False(t, analysed, "the analyse reset the change count")
}

func TestStatsKeeperRunStopsWithItsContext(t *testing.T) {
	t.Parallel()
	pool := statsDB(t)
	keeper := riverjobs.NewStatsKeeper(pool, zap.NewNop(), riverjobs.StatsOptions{Interval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- keeper.Run(ctx) }()
	insertJobs(t, pool, 1, 1500, "scheduled")
	require.Eventually(t, func() bool {
		var n int64
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT analyze_count FROM pg_stat_user_tables
WHERE relid = 'river_job'::regclass`).Scan(&n))
		return n > 0
	}, 10*time.Second, 20*time.Millisecond, "Run analysed the burst")
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
}
