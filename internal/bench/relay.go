package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/standmeet/standmeet/internal/infra/events"
)

// The relay benchmark records events of relayBenchType, each fanned out to
// one job of relayBenchKind (which no worker runs), from relayBenchWriters
// goroutines.
const (
	relayBenchType    = "bench.relay"
	relayBenchKind    = "bench.relay_sink"
	relayBenchWriters = 8
)

// relayBenchResult holds relayBench's counts and rates.
type relayBenchResult struct {
	// Events is how many events were recorded and fanned out.
	Events int
	// EventsPerSec: events recorded (one per transaction, from 8
	// goroutines) and fanned out, from the first record to the last
	// fan-out.
	EventsPerSec float64
	// RecordPerSec: the recording alone (the relay running meanwhile).
	RecordPerSec float64
	// InsertPerSec: the ceiling, bare single-row INSERTs of the same shape
	// into a scratch table with only a primary key, same concurrency, same
	// run.
	InsertPerSec float64
	// FanOutP50 and FanOutP99: commit-to-fan-out latency under that load.
	FanOutP50, FanOutP99 time.Duration
}

// relayBench measures the bus on pool's database: n events recorded by 8
// goroutines, one per transaction, while one relay (default options, an
// insert-only River client) fans them out; and, in the same run, n bare
// single-row INSERTs at the same concurrency. The pool should allow at least
// 10 connections.
//
// Give it a scratch database: it refuses one with un-fanned events or with
// another relay listening, because its relay would claim foreign events (and
// another relay would claim its own). It deletes what it wrote.
func relayBench(ctx context.Context, pool *pgxpool.Pool, n int) (res relayBenchResult, err error) {
	res = relayBenchResult{Events: n}
	if n <= 0 {
		return res, errors.New("relay bench: n must be positive")
	}
	if err := relayPrecheck(ctx, pool); err != nil {
		return res, err
	}

	insertElapsed, err := relayBareInserts(ctx, pool, n)
	if err != nil {
		return res, err
	}
	res.InsertPerSec = float64(n) / insertElapsed.Seconds()

	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return res, fmt.Errorf("relay bench: river client: %w", err)
	}
	owner := uuid.New()
	defer func() { err = errors.Join(err, relayCleanup(pool, owner)) }()

	var (
		mu        sync.Mutex
		committed = make(map[uuid.UUID]time.Time, n)
		early     = map[uuid.UUID]time.Time{} // fanned out before its writer noted the commit
		latencies = make([]time.Duration, 0, n)
		allDone   = make(chan struct{})
	)
	note := func(commitAt, fanAt time.Time) {
		latencies = append(latencies, fanAt.Sub(commitAt))
		if len(latencies) == n {
			close(allDone)
		}
	}
	relay, err := events.NewRelay(pool, client, []events.Subscription{{Kind: relayBenchKind, EventTypes: []string{relayBenchType}}}, events.RelayOptions{
		OnFanOut: func(ids []uuid.UUID) {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				if at, ok := committed[id]; ok {
					note(at, now)
				} else {
					early[id] = now
				}
			}
		},
	})
	if err != nil {
		return res, err
	}
	relayCtx, stopRelay := context.WithCancel(ctx)
	relayDone := make(chan error, 1)
	go func() { relayDone <- relay.Run(relayCtx) }()
	defer func() { stopRelay(); <-relayDone }()

	rec := events.NewRecorder(func(t string) bool { return t == relayBenchType }, nil)
	start := time.Now()
	err = runRelayWriters(ctx, n, func(ctx context.Context, i int) error {
		var id uuid.UUID
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var err error
			id, err = rec.With(tx).Record(ctx, owner, relayBenchType, "bench://relay", map[string]int{"i": i})
			return err
		}); err != nil {
			return err
		}
		at := time.Now()
		mu.Lock()
		defer mu.Unlock()
		committed[id] = at
		if fanAt, ok := early[id]; ok {
			note(at, fanAt)
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("relay bench: record: %w", err)
	}
	res.RecordPerSec = float64(n) / time.Since(start).Seconds()
	select {
	case <-allDone:
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(10 * time.Minute):
		return res, errors.New("relay bench: events not all fanned out within 10 minutes of the last record")
	}
	res.EventsPerSec = float64(n) / time.Since(start).Seconds()
	mu.Lock()
	slices.Sort(latencies)
	res.FanOutP50 = latencies[len(latencies)/2]
	res.FanOutP99 = latencies[min(len(latencies)-1, len(latencies)*99/100)]
	mu.Unlock()
	return res, nil
}

// relayPrecheck refuses a database where the bench would interfere with a
// real bus.
func relayPrecheck(ctx context.Context, pool *pgxpool.Pool) error {
	var unfanned, listeners int
	if err := pool.QueryRow(ctx, `SELECT
  (SELECT count(*) FROM events WHERE fanned_out_at IS NULL AND poisoned_at IS NULL),
  (SELECT count(*) FROM pg_stat_activity
   WHERE datname = current_database() AND query ILIKE 'LISTEN `+events.Channel+`%')`).Scan(&unfanned, &listeners); err != nil {
		return fmt.Errorf("relay bench: precheck: %w", err)
	}
	if unfanned > 0 || listeners > 0 {
		return fmt.Errorf("relay bench: needs a scratch database (found %d un-fanned events, %d listening relays)", unfanned, listeners)
	}
	return nil
}

// relayBareInserts times n single-row INSERTs (autocommit) into a scratch
// table shaped like events, with only a primary key.
func relayBareInserts(ctx context.Context, pool *pgxpool.Pool, n int) (elapsed time.Duration, err error) {
	table := pgx.Identifier{"bench_bare_insert_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]}.Sanitize()
	if _, err := pool.Exec(ctx, `CREATE TABLE `+table+` (
  id uuid PRIMARY KEY, owner_id uuid NOT NULL, type text NOT NULL, subject text NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT now(), data jsonb NOT NULL)`); err != nil {
		return 0, fmt.Errorf("relay bench: scratch table: %w", err)
	}
	defer func() {
		if _, dropErr := pool.Exec(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS `+table); dropErr != nil {
			err = errors.Join(err, fmt.Errorf("relay bench: drop scratch table: %w", dropErr))
		}
	}()
	owner := uuid.New()
	q := `INSERT INTO ` + table + ` (id, owner_id, type, subject, data) VALUES ($1, $2, $3, $4, $5)`
	start := time.Now()
	err = runRelayWriters(ctx, n, func(ctx context.Context, i int) error {
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		raw, err := json.Marshal(map[string]int{"i": i})
		if err != nil {
			return err
		}
		_, err = pool.Exec(ctx, q, id, owner, relayBenchType, "bench://relay", raw)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("relay bench: bare insert: %w", err)
	}
	return time.Since(start), nil
}

// runRelayWriters calls write(i) for i in [0, n) from relayBenchWriters goroutines and
// returns the first error.
func runRelayWriters(ctx context.Context, n int, write func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for w := range relayBenchWriters {
		wg.Go(func() {
			for i := w; i < n; i += relayBenchWriters {
				if err := write(ctx, i); err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

// relayCleanup deletes the bench's events and jobs.
func relayCleanup(pool *pgxpool.Pool, owner uuid.UUID) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// River's rows go through River's client: only River writes its tables.
	c, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		return fmt.Errorf("relay bench: river client for clean-up: %w", err)
	}
	for {
		res, err := c.JobDeleteMany(ctx, river.NewJobDeleteManyParams().Kinds(relayBenchKind).First(10000))
		if err != nil {
			return fmt.Errorf("relay bench: clean up jobs: %w", err)
		}
		if len(res.Jobs) < 10000 {
			break
		}
	}
	if _, err := pool.Exec(ctx, `DELETE FROM events WHERE owner_id = $1`, owner); err != nil {
		return fmt.Errorf("relay bench: clean up events: %w", err)
	}
	return nil
}
