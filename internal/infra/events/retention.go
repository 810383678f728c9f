package events

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.uber.org/zap"
)

// Retention defaults.
const (
	// DefaultRetention is how long events are kept when
	// STANDMEET_EVENT_RETENTION is unset.
	DefaultRetention = 30 * 24 * time.Hour
	// PruneKind is the River job kind of the retention job.
	PruneKind = "events.prune"
	// pruneEvery is how often the periodic prune is enqueued.
	pruneEvery = time.Hour
	// pruneBatch bounds one DELETE, so the sweep never holds many row locks
	// or produces one huge WAL burst.
	pruneBatch = 1000
)

// ParseRetention parses STANDMEET_EVENT_RETENTION: empty means
// DefaultRetention; otherwise a whole number of days ("30d") or a Go duration
// ("720h"). It must be positive.
func ParseRetention(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultRetention, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, fmt.Errorf("event retention %q: want days like 30d or a duration like 720h", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("event retention %q: want days like 30d or a duration like 720h", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("event retention %q: must be positive", s)
	}
	return d, nil
}

// PruneArgs are the args of the retention job. Retention travels in the args
// so the periodic job's constructor, which knows the configuration, decides
// it; zero means DefaultRetention.
type PruneArgs struct {
	Retention time.Duration `json:"retention"`
}

// Kind implements river.JobArgs.
func (PruneArgs) Kind() string { return PruneKind }

// InsertOpts makes a prune unique while one is queued or running: a backlog of
// hourly prunes after an outage collapses into one.
func (PruneArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		MaxAttempts: 3,
		UniqueOpts: river.UniqueOpts{
			ByState: []rivertype.JobState{
				rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
				rivertype.JobStateRetryable, rivertype.JobStateScheduled,
			},
		},
	}
}

// PruneWorker deletes events older than the retention. Events that were
// never fanned out and are not poisoned are kept whatever their age: they are
// still owed to subscribers (a relay that has been down for a month must not
// lose them). Poisoned events are kept for inspection until they are old.
type PruneWorker struct {
	river.WorkerDefaults[PruneArgs]
	pool    *pgxpool.Pool
	log     *zap.Logger
	metrics *Metrics
}

// NewPruneWorker returns the retention worker; register it with the River
// client's workers. log and m may be nil.
func NewPruneWorker(pool *pgxpool.Pool, log *zap.Logger, m *Metrics) *PruneWorker {
	if log == nil {
		log = zap.NewNop()
	}
	return &PruneWorker{pool: pool, log: log.Named("events.prune"), metrics: m}
}

// Timeout lets a large first sweep run longer than River's one-minute
// default; a sweep cut short is simply continued by the next one.
func (w *PruneWorker) Timeout(*river.Job[PruneArgs]) time.Duration { return 10 * time.Minute }

// pruneSQL deletes one batch of old events, through the occurred_at index.
const pruneSQL = `DELETE FROM events WHERE id IN (
  SELECT id FROM events
  WHERE occurred_at < $1 AND (fanned_out_at IS NOT NULL OR poisoned_at IS NOT NULL)
  ORDER BY occurred_at
  LIMIT $2
)`

// Work deletes old events in batches of 1,000 until none is left.
func (w *PruneWorker) Work(ctx context.Context, job *river.Job[PruneArgs]) error {
	retention := job.Args.Retention
	if retention <= 0 {
		retention = DefaultRetention
	}
	n, err := Prune(ctx, w.pool, time.Now().Add(-retention), pruneBatch)
	w.metrics.addPruned(n)
	if n > 0 {
		w.log.Info("pruned old events", zap.Int64("deleted", n), zap.Duration("retention", retention))
	}
	return err
}

// Prune deletes events that occurred before cutoff and are fanned out or
// poisoned, batch rows per statement, until none is left, and returns how
// many it deleted.
func Prune(ctx context.Context, pool *pgxpool.Pool, cutoff time.Time, batch int) (int64, error) {
	var total int64
	for {
		tag, err := pool.Exec(ctx, pruneSQL, cutoff, batch)
		if err != nil {
			return total, fmt.Errorf("prune events: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < int64(batch) {
			return total, nil
		}
	}
}

// PeriodicJobs returns the retention job, enqueued hourly (and once at start)
// by the River leader, for the lead's River client configuration.
func PeriodicJobs(retention time.Duration) []*river.PeriodicJob {
	return []*river.PeriodicJob{
		river.NewPeriodicJob(
			river.PeriodicInterval(pruneEvery),
			func() (river.JobArgs, *river.InsertOpts) { return PruneArgs{Retention: retention}, nil },
			&river.PeriodicJobOpts{ID: PruneKind, RunOnStart: true},
		),
	}
}
