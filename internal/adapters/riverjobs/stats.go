package riverjobs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"
)

// StatsKeeper keeps PostgreSQL's planner statistics of river_job current
// by analysing the table as soon as a good share of its rows changed,
// instead of waiting for autovacuum.
//
// Why: River's scheduler query (JobSchedule) checks each due job for a
// unique conflict with a subquery that the planner re-runs per row when it
// believes few jobs are due. When a burst parks thousands of deliveries as
// scheduled on a table whose statistics were taken before the burst (a
// fresh database, or one whose jobs were all completed at the last
// analyse), the query turns quadratic — measured: 3,000 due jobs took 17 s,
// 9 million index probes, where the same query after ANALYZE takes 70 ms —
// and it holds its row locks all that time, so nothing parked moves
// (W1 stalled for up to a minute in about one bench run in four).
// Autovacuum analyses only after its naptime (a minute by default) and 10%
// of the table changed; this looks every Interval.
//
// Two triggers: a share of the table changed (general freshness), or the
// jobs waiting for their time (scheduled or retryable, the rows the
// scheduler's query reads) more than doubled since the last analyse here.
// The second is what keeps the scheduler linear: a burst that parks
// deliveries at 400/s is analysed at a few hundred, then at each doubling,
// so the planner's estimate is never far below the truth; with the first
// alone a scheduler query that started between two analyses still ran
// 3.5–6.8 s.
type StatsKeeper struct {
	pool   *pgxpool.Pool
	logger *zap.Logger
	opts   StatsOptions

	mu sync.Mutex
	// waiting is the count of scheduled and retryable jobs at the last
	// analyse by this keeper.
	waiting int64
}

// StatsOptions tune a StatsKeeper; zero values take the defaults.
type StatsOptions struct {
	// Interval is how often the counts are read (500 ms).
	Interval time.Duration
	// MinChanges is the fewest changed rows worth an analyse (1,000).
	MinChanges int64
	// Fraction is the share of the live rows that must have changed
	// (0.2), so a large table is not analysed every Interval.
	Fraction float64
	// MinWaiting is the growth of the scheduled and retryable jobs, beyond
	// doubling, that is worth an analyse (200).
	MinWaiting int64
}

// NewStatsKeeper returns a keeper for river_job on pool.
func NewStatsKeeper(pool *pgxpool.Pool, logger *zap.Logger, opts StatsOptions) *StatsKeeper {
	if opts.Interval <= 0 {
		opts.Interval = 500 * time.Millisecond
	}
	if opts.MinWaiting <= 0 {
		opts.MinWaiting = 200
	}
	if opts.MinChanges <= 0 {
		opts.MinChanges = 1000
	}
	if opts.Fraction <= 0 {
		opts.Fraction = 0.2
	}
	return &StatsKeeper{pool: pool, logger: logger, opts: opts}
}

// Run checks every Interval until ctx ends. A failed check is logged and
// tried again at the next tick: stale statistics cost speed, not data.
func (k *StatsKeeper) Run(ctx context.Context) error {
	t := time.NewTicker(k.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := k.Check(ctx); err != nil && ctx.Err() == nil {
			k.logger.Warn("river_job statistics", zap.Error(err))
		}
	}
}

// Check analyses river_job when more rows changed since its last analyse
// than MinChanges and Fraction of its live rows, or when the scheduled and
// retryable jobs grew past twice their count at this keeper's last analyse
// plus MinWaiting, and reports whether it did. Several replicas may check
// at once: the first analyse resets the change count the others read, and
// SKIP_LOCKED never waits on another analyse or on autovacuum.
func (k *StatsKeeper) Check(ctx context.Context) (bool, error) {
	var changed, live, waiting int64
	err := k.pool.QueryRow(ctx, `SELECT s.n_mod_since_analyze, s.n_live_tup,
  (SELECT count(*) FROM river_job WHERE state IN ('scheduled', 'retryable'))
FROM pg_stat_user_tables s WHERE s.relid = to_regclass('river_job')`).Scan(&changed, &live, &waiting)
	if err != nil {
		return false, fmt.Errorf("read river_job counts: %w", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	churned := changed >= k.opts.MinChanges && float64(changed) >= k.opts.Fraction*float64(live)
	grew := waiting > 2*k.waiting+k.opts.MinWaiting
	if !churned && !grew {
		return false, nil
	}
	start := time.Now()
	if _, err := k.pool.Exec(ctx, `ANALYZE (SKIP_LOCKED) river_job`); err != nil {
		return false, fmt.Errorf("analyse river_job: %w", err)
	}
	k.waiting = waiting
	k.logger.Debug("analysed river_job", zap.Int64("changed", changed), zap.Int64("live", live),
		zap.Int64("waiting", waiting), zap.Duration("took", time.Since(start)))
	return true, nil
}
